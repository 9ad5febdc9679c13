//! The HTTP API against a running `ternd`, with a real HTTP client (curl): the bearer
//! token, every route, RRset changes seen by dig, zones added and removed, malformed and
//! unauthorised requests. Hostile clients and refused changes: `hostile_http.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;

use common::*;
use serde_json::Value;

const TOKEN: &str = "test-token-0123456789abcdef";

/// `curl` with `args` against `path`; the status and the body as JSON.
fn curl(
    http: u16,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&str>,
) -> (u16, Value) {
    let mut cmd = Command::new("curl");
    cmd.args(["-s", "-o", "-", "-w", "\n%{http_code}", "-X", method]);
    if let Some(token) = token {
        cmd.args(["-H", &format!("Authorization: Bearer {token}")]);
    }
    if let Some(body) = body {
        cmd.args(["-H", "Content-Type: application/json", "--data", body]);
    }
    let out = cmd.arg(format!("http://127.0.0.1:{http}{path}")).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').unwrap();
    (code.parse().unwrap(), serde_json::from_str(body).unwrap_or(Value::String(body.into())))
}

fn api(http: u16, method: &str, path: &str, body: Option<&str>) -> (u16, Value) {
    curl(http, method, path, Some(TOKEN), body)
}

fn dig(addr: SocketAddr, name: &str, rtype: &str) -> String {
    dig_short(addr, name, rtype)
}

fn start(dir: &Path) -> (Daemon, u16) {
    std::fs::write(dir.join("example.com.zone"), tern_server::demo::ZONE_TEXT).unwrap();
    std::fs::write(dir.join("token"), format!("{TOKEN}\n")).unwrap();
    let (port, http) = (free_port(), free_port());
    let text = format!(
        "[server]\nlisten = [\"127.0.0.1:{port}\"]\nudp-workers = 1\ntcp-workers = 1\nstorage = \"storage\"\nadded-zone-dirs = [\".\"]\n\
         [http]\nlisten = \"127.0.0.1:{http}\"\napi-token-file = \"token\"\n\
         [[zone]]\nname = \"example.com\"\nfile = \"example.com.zone\"\nzonefile-sync = \"1h\"\n"
    );
    let config = dir.join("ternd.toml");
    std::fs::write(&config, text).unwrap();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    (Daemon::spawn(&["--config", config.to_str().unwrap()], addr, &dir.join("log")), http)
}

#[test]
fn the_api_as_a_client_uses_it() {
    let dir = tempfile::tempdir().unwrap();
    let (daemon, http) = start(dir.path());
    // Unauthorised: no token, a wrong one; refused, logged, JSON.
    let (code, body) = curl(http, "GET", "/api/v1/status", None, None);
    assert_eq!((code, body["error"].is_string()), (401, true), "{body}");
    let (code, _) = curl(http, "GET", "/api/v1/zones", Some("wrong-token-0123456789"), None);
    assert_eq!(code, 401);
    assert!(daemon.log_text().contains("HTTP API: request refused"));
    // Reading.
    let (code, status) = api(http, "GET", "/api/v1/status", None);
    assert_eq!(code, 200, "{status}");
    assert!(status["version"].as_str().unwrap().starts_with("ternd 0."));
    let (_, zones) = api(http, "GET", "/api/v1/zones", None);
    assert_eq!(zones[0]["zone"], "example.com.");
    let (code, zone) = api(http, "GET", "/api/v1/zones/example.com", None);
    assert_eq!(code, 200);
    let serial = zone["serial"].as_u64().unwrap();
    assert_eq!(api(http, "GET", "/api/v1/zones/nope.example", None).0, 404);
    let (_, records) = api(http, "GET", "/api/v1/zones/example.com/records?name=mail&type=A", None);
    let mail = records["records"].as_array().unwrap();
    assert_eq!(mail.len(), 1, "{records}");
    assert_eq!(
        (mail[0]["name"].as_str(), mail[0]["data"].as_str()),
        (Some("mail.example.com."), Some("192.0.2.25"))
    );
    rrsets(http, daemon.addr, serial);
    zones_and_actions(http, daemon.addr, dir.path());
    assert_eq!(api(http, "GET", "/api/v1/nothing", None).0, 404);
    // Issue #53 item 5: a method a resource does not take says so, in JSON.
    let (code, body) = api(http, "DELETE", "/api/v1/zones", None);
    assert_eq!(code, 405, "{body}");
    assert_eq!(body["error"], "DELETE is not allowed on /api/v1/zones (see docs/api.yaml)");
    assert_eq!(curl(http, "GET", "/metrics", None, None).0, 200, "metrics need no token");
}

fn rrsets(http: u16, addr: SocketAddr, serial: u64) {
    let change = r#"{"rrsets":[{"name":"web","type":"A","ttl":60,"changetype":"replace","records":["192.0.2.10","192.0.2.11"]},
                               {"name":"api","type":"TXT","changetype":"replace","records":["\"made by the API\""]}]}"#;
    let (code, body) = api(http, "PATCH", "/api/v1/zones/example.com/rrsets", Some(change));
    assert_eq!(code, 200, "{body}");
    let mut web: Vec<String> =
        dig(addr, "web.example.com", "A").lines().map(String::from).collect();
    web.sort();
    assert_eq!(web, ["192.0.2.10", "192.0.2.11"]);
    assert_eq!(dig(addr, "api.example.com", "TXT"), "\"made by the API\"\n");
    let (_, zone) = api(http, "GET", "/api/v1/zones/example.com", None);
    assert!(zone["serial"].as_u64().unwrap() > serial, "{zone}");
    let delete = r#"{"rrsets":[{"name":"api","type":"TXT","changetype":"delete"}]}"#;
    assert_eq!(api(http, "PATCH", "/api/v1/zones/example.com/rrsets", Some(delete)).0, 200);
    assert!(dig(addr, "api.example.com", "TXT").is_empty());
    // Malformed: not JSON, an unknown change, bad RDATA (nothing applied).
    let (code, body) = api(http, "PATCH", "/api/v1/zones/example.com/rrsets", Some("{"));
    assert_eq!((code, body["error"].is_string()), (400, true), "{body}");
    let add = r#"{"rrsets":[{"name":"a","type":"A","changetype":"add","records":["192.0.2.1"]}]}"#;
    assert_eq!(api(http, "PATCH", "/api/v1/zones/example.com/rrsets", Some(add)).0, 400);
    let bad = r#"{"rrsets":[{"name":"b","type":"A","changetype":"replace","records":["nope"]}]}"#;
    let (code, body) = api(http, "PATCH", "/api/v1/zones/example.com/rrsets", Some(bad));
    assert_eq!(code, 400, "{body}");
    assert!(body["error"].as_str().unwrap().contains("b.example.com. A"), "{body}");
    assert!(dig(addr, "b.example.com", "A").is_empty());
}

fn zones_and_actions(http: u16, addr: SocketAddr, dir: &Path) {
    let file = dir.join("added.zone");
    std::fs::write(&file, "@ 300 SOA ns h 1 2 3 4 5\n@ 300 NS ns\nns 300 A 192.0.2.53\n").unwrap();
    let new = format!(
        r#"{{"name":"added.example","file":"{}","settings":{{"notify-ns":false}}}}"#,
        file.display()
    );
    let (code, body) = api(http, "POST", "/api/v1/zones", Some(&new));
    assert_eq!(code, 200, "{body}");
    assert_eq!(dig(addr, "ns.added.example", "A"), "192.0.2.53\n");
    assert_eq!(
        api(http, "POST", "/api/v1/zones", Some(r#"{"name":"x.example","bogus":1}"#)).0,
        400
    );
    // A list is added in one step, all or none.
    let many = |names: &[&str]| {
        let zones: Vec<String> = names
            .iter()
            .map(|n| format!(r#"{{"name":"{n}","file":"{}"}}"#, file.display()))
            .collect();
        format!("[{}]", zones.join(","))
    };
    let (code, body) =
        api(http, "POST", "/api/v1/zones", Some(&many(&["m1.example", "m2.example"])));
    assert_eq!(code, 200, "{body}");
    assert!(body.to_string().contains("2 zones loaded"), "{body}");
    assert_eq!(dig(addr, "ns.m2.example", "A"), "192.0.2.53\n");
    let (code, body) =
        api(http, "POST", "/api/v1/zones", Some(&many(&["m3.example", "m1.example"])));
    assert_eq!(code, 409, "{body}");
    assert!(dig(addr, "ns.m3.example", "A").is_empty(), "none of a refused list is added");
    // Issue #53 item 4: a zone whose file is missing adds nothing, the others neither.
    let missing = dir.join("missing.zone").display().to_string();
    let list = format!(
        r#"[{{"name":"m4.example","file":"{}"}},{{"name":"m5.example","file":"{missing}"}}]"#,
        file.display()
    );
    let (code, body) = api(http, "POST", "/api/v1/zones", Some(&list));
    assert_eq!(code, 409, "{body}");
    assert!(body["error"].as_str().unwrap().contains("nothing added"), "{body}");
    assert_eq!(api(http, "GET", "/api/v1/zones/m4.example", None).0, 404, "m4 is not served");
    let (code, body) = api(http, "POST", "/api/v1/zones/example.com/actions/flush", None);
    assert_eq!(code, 200, "{body}");
    assert!(std::fs::read_to_string(dir.join("example.com.zone")).unwrap().contains("192.0.2.10"));
    assert_eq!(api(http, "POST", "/api/v1/zones/example.com/actions/refresh", None).0, 409);
    assert_eq!(api(http, "POST", "/api/v1/zones/example.com/actions/bogus", None).0, 404);
    assert_eq!(api(http, "POST", "/api/v1/reload", None).0, 200);
    assert_eq!(api(http, "DELETE", "/api/v1/zones/added.example", None).0, 200);
    assert!(dig(addr, "ns.added.example", "A").is_empty());
    assert_eq!(api(http, "DELETE", "/api/v1/zones/example.com", None).0, 409, "from the file");
}
