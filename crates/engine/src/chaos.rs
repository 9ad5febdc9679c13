//! CHAOS-class identity queries: `version.bind`/`version.server`, `hostname.bind` and
//! `id.server` (RFC 4892 §2.2), answered with a TXT record when the operator configured a
//! value, REFUSED otherwise (the default, as Knot DNS and NSD do).

use tern_wire::message::Section;
use tern_wire::{Class, Dname, Rcode, Rtype};

use crate::response::Response;
use crate::Config;

/// Answers a CHAOS query.
pub(crate) fn answer(config: &Config, qname: &Dname, qtype: Rtype, resp: &mut Response<'_>) {
    let value = match_name(config, qname);
    let Some(value) = value.filter(|_| matches!(qtype, Rtype::TXT | Rtype::ANY)) else {
        resp.rcode = Rcode::REFUSED;
        return;
    };
    let mut rdata = [0u8; 256];
    let text = value.as_bytes().get(..255).unwrap_or(value.as_bytes());
    if let Some((len, rest)) = rdata.split_first_mut() {
        *len = text.len() as u8;
        if let Some(dst) = rest.get_mut(..text.len()) {
            dst.copy_from_slice(text);
        }
    }
    let rdata = rdata.get(..=text.len()).unwrap_or(&[]);
    resp.set_authoritative(true);
    if resp.writer.push_record(Section::Answer, qname, Rtype::TXT, Class::CH, 0, rdata).is_err() {
        resp.truncate();
    }
}

fn match_name<'c>(config: &'c Config, qname: &Dname) -> Option<&'c str> {
    let text = qname.to_string().to_ascii_lowercase();
    match text.as_str() {
        "version.bind." | "version.server." => config.version.as_deref(),
        "hostname.bind." => config.hostname.as_deref(),
        "id.server." => config.server_id.as_deref(),
        _ => None,
    }
}
