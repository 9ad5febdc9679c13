//! The zones of a configuration taken one table at a time, as they are read: each is
//! given its database, made relative to the configuration's directory, planned against
//! the tables read before the zones ([`Resolver`]), and checked against the zones taken
//! before it (a name listed twice). Only the plans are kept, not the tables as read,
//! which took several times the plans' memory for a million zones.
//!
//! Errors are kept by kind, so that the caller reports them in the order a reading of
//! the whole file gives: names listed twice, then databases, then (when nothing else is
//! wrong) the plans' problems, then the files the zones share ([`files::check`]).

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tern_control::database::Database;
use tern_wire::Name;

use super::xfr::{Problem, Resolved, Resolver};
use super::{anchor_source, database, files, Config, ZoneConfig, ZonePlan};

/// An error and where it is (`None`: nowhere in particular).
pub(super) type Located = (Option<Range<usize>>, String);

/// A zone read and planned, not yet taken (see [`Intake::prepare`]).
#[derive(Debug)]
pub(super) struct Prepared {
    span: Range<usize>,
    database: Option<String>,
    plan: Result<Arc<ZonePlan>, (Name, String)>,
    producer: Option<Box<ZoneConfig>>,
}

impl Prepared {
    /// The zone's name.
    pub fn name(&self) -> &Name {
        match &self.plan {
            Ok(plan) => &plan.name,
            Err((name, _)) => name,
        }
    }
}

/// The zones taken so far (see the module comment).
pub(super) struct Intake {
    resolver: Resolver,
    /// Where relative zone files are taken from (`None`: left as they are).
    base: Option<PathBuf>,
    databases: HashMap<String, Arc<Database>>,
    plans: Vec<Arc<ZonePlan>>,
    spans: Vec<Range<usize>>,
    /// The names of the zones taken: planned, and not.
    names: HashSet<ByName>,
    unplanned: HashSet<Name>,
    /// The tables of the produced catalogs taken, as read.
    producers: Vec<ZoneConfig>,
    duplicates: Vec<Located>,
    database_errors: Vec<Located>,
    problems: Vec<Problem>,
}

impl Intake {
    /// Ready to take the zones of `config`, whose other tables are read (its relative
    /// paths taken from `base`, and the zones' too when `anchor`); about `zones` of them.
    pub fn new(config: &Config, base: &Path, anchor: bool, zones: usize) -> Intake {
        let mut database_errors = Vec::new();
        let databases = database::by_id(&config.databases, &mut database_errors);
        let signing = config.signing_defaults();
        let storage = &config.server.storage;
        let (resolver, problems) = Resolver::new(&config.tables, base, (storage, &signing));
        Intake {
            resolver,
            base: anchor.then(|| base.to_owned()),
            databases,
            plans: Vec::with_capacity(zones),
            spans: Vec::with_capacity(zones),
            names: HashSet::with_capacity(zones),
            unplanned: HashSet::new(),
            producers: Vec::new(),
            duplicates: Vec::new(),
            database_errors,
            problems,
        }
    }

    /// Reads `zone` (its table at `span`) into its plan, to be taken by [`Self::admit`]
    /// or dropped (a zone added at run time, then removed).
    pub fn prepare(&mut self, span: Range<usize>, mut zone: ZoneConfig) -> Prepared {
        let database = database::attach(&mut zone, &self.databases).err();
        if let Some(base) = &self.base {
            anchor_source(&mut zone.source, base);
        }
        let producer = zone.is_producer().then(|| Box::new(zone.clone()));
        let plan = self.resolver.plan_owned(zone).map(Arc::new);
        Prepared { span, database, plan, producer }
    }

    /// Takes a zone read, unless one of its name was taken before.
    pub fn admit(&mut self, zone: Prepared) {
        let fresh = match &zone.plan {
            Ok(plan) => {
                !self.unplanned.contains(&plan.name) && self.names.insert(ByName(Arc::clone(plan)))
            }
            Err((name, _)) => !self.names.contains(name) && self.unplanned.insert(name.clone()),
        };
        if !fresh {
            let why = format!("zone {} is listed twice", zone.name());
            self.duplicates.push((Some(zone.span), why));
            return;
        }
        if let Some(why) = zone.database {
            self.database_errors.push((Some(zone.span.clone()), why));
        }
        self.producers.extend(zone.producer.map(|zone| *zone));
        match zone.plan {
            Ok(plan) => {
                self.plans.push(plan);
                self.spans.push(zone.span);
            }
            Err((name, why)) => self.problems.push((zone.span, format!("zone {name}: {why}"))),
        }
    }

    /// The zones taken (planned or not).
    pub fn taken(&self) -> usize {
        self.names.len() + self.unplanned.len()
    }

    /// The errors found as the zones were taken: names listed twice, then databases
    /// (the `[[database]]` tables' own first).
    pub fn errors(&mut self) -> impl Iterator<Item = Located> + '_ {
        self.duplicates.drain(..).chain(self.database_errors.drain(..))
    }

    /// The keys and plans, and the tables of the produced catalogs; else the problems
    /// of the plans, or (when the plans have none) of the zones' files in `storage`.
    pub fn finish(self, storage: &Path) -> Result<(Resolved, Vec<ZoneConfig>), Vec<Located>> {
        let Intake { resolver, plans, spans, names, problems, producers, .. } = self;
        // The plans must be theirs alone for produced catalogs to be given their members.
        drop(names);
        let resolved = resolver.finish(plans, &spans, problems).map_err(|problems| {
            problems.into_iter().map(|(span, why)| (Some(span), why)).collect::<Vec<_>>()
        })?;
        let refused = files::check(&resolved.zones, storage);
        if refused.is_empty() {
            return Ok((resolved, producers));
        }
        let located = refused.into_iter().map(|(at, why)| {
            let plan = resolved.zones.get(at).map(|plan| plan.name.to_string());
            (spans.get(at).cloned(), format!("zone {}: {why}", plan.unwrap_or_default()))
        });
        Err(located.collect())
    }
}

/// A plan in a set, by its zone's name.
#[derive(Debug)]
struct ByName(Arc<ZonePlan>);

impl PartialEq for ByName {
    fn eq(&self, other: &Self) -> bool {
        self.0.name == other.0.name
    }
}

impl Eq for ByName {}

impl Hash for ByName {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.name.hash(state);
    }
}

impl std::borrow::Borrow<Name> for ByName {
    fn borrow(&self) -> &Name {
        &self.0.name
    }
}
