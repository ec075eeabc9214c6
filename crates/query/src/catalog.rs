//! A Dolt database as a DataFusion catalog: one schema per state. The session's default
//! schema is the state it was opened at (`WORKING`: the checked-out branch's working set, as
//! `dolt sql` reads); any other state is a schema of its own, named as
//! [`prollystore_dolt::db::parse_at`] reads states — a branch, tag or commit, `HEAD~2`,
//! `feature@WORKING`, `main@STAGED` — or as Dolt names a database at a revision
//! (`` `db/feature` ``: the part after the first `/`). `SELECT … FROM t AS OF 'x'` becomes
//! `` FROM `x`.t `` ([`crate::as_of`]).
//!
//! Each schema holds the state's tables and Dolt's system tables `dolt_log`,
//! `dolt_branches` and `dolt_diff_<table>` ([`crate::system`]). A state is resolved once per
//! session, the first time a query names it: later queries of the same session see the same
//! commit and root even if a branch moves.

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use datafusion::catalog::{CatalogProvider, SchemaProvider, TableProvider};
use datafusion::common::{DataFusionError, Result};
use prollystore_dolt::db::RootValue;
use prollystore_dolt::parts::Origin;
use prollystore_dolt::Database;

use crate::error::dolt_error;
use crate::system;
use crate::table::DoltTable;

/// The catalog of one database: a schema per state, made when first named.
#[derive(Debug)]
pub struct DoltCatalog {
    db: Arc<Database>,
    default_at: String,
    schemas: Mutex<HashMap<String, Arc<DoltSchema>>>,
}

impl DoltCatalog {
    /// The catalog of `db`, whose default schema is state `default_at`.
    pub fn new(db: Arc<Database>, default_at: impl Into<String>) -> DoltCatalog {
        DoltCatalog {
            db,
            default_at: default_at.into(),
            schemas: Mutex::new(HashMap::new()),
        }
    }

    /// The schema of state `name` (resolved and kept on first use).
    pub fn state(&self, name: &str) -> Result<Arc<DoltSchema>> {
        let at = match name.split_once('/') {
            Some((_, rev)) => rev,
            None => name,
        };
        let mut schemas = self.schemas.lock().expect("schema cache poisoned");
        if let Some(s) = schemas.get(at) {
            return Ok(s.clone());
        }
        let schema = Arc::new(DoltSchema::resolve(self.db.clone(), at)?);
        schemas.insert(at.to_string(), schema.clone());
        Ok(schema)
    }
}

impl CatalogProvider for DoltCatalog {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn schema_names(&self) -> Vec<String> {
        let mut names = vec![self.default_at.clone()];
        if let Ok(branches) = self.db.branches() {
            names.extend(branches.into_iter().map(|(b, _)| b));
        }
        names.dedup();
        names
    }

    fn schema(&self, name: &str) -> Option<Arc<dyn SchemaProvider>> {
        // DataFusion asks by name and takes no error here: a state that does not resolve is
        // a schema that does not exist ("table not found"); `DoltSession` checks states it is
        // given before planning, to say why.
        self.state(name).ok().map(|s| s as Arc<dyn SchemaProvider>)
    }
}

/// The tables of one state.
#[derive(Debug)]
pub struct DoltSchema {
    db: Arc<Database>,
    origin: Origin,
    root: RootValue,
    tables: Mutex<HashMap<String, Arc<dyn TableProvider>>>,
    /// Tables registered by the caller (`SessionContext::register_table`), found first.
    registered: Mutex<HashMap<String, Arc<dyn TableProvider>>>,
}

impl DoltSchema {
    /// State `at` of `db`, resolved to its commit and root now.
    pub fn resolve(db: Arc<Database>, at: &str) -> Result<DoltSchema> {
        let origin = Origin::resolve(&db, at).map_err(dolt_error)?;
        let root = db.root_value(origin.root).map_err(dolt_error)?;
        Ok(DoltSchema {
            db,
            origin,
            root,
            tables: Mutex::new(HashMap::new()),
            registered: Mutex::new(HashMap::new()),
        })
    }

    /// What the state resolved to.
    pub fn origin(&self) -> &Origin {
        &self.origin
    }

    /// The state's user tables.
    pub fn root_table_names(&self) -> Vec<String> {
        self.root.table_names()
    }

    /// The stored name of user table `name` (exact, else the one table whose name matches
    /// ignoring ASCII case, as Dolt's table names do).
    fn user_table(&self, name: &str) -> Option<String> {
        let names = self.root.table_names();
        if names.iter().any(|n| n == name) {
            return Some(name.to_string());
        }
        let mut folded = names.into_iter().filter(|n| n.eq_ignore_ascii_case(name));
        match (folded.next(), folded.next()) {
            (Some(n), None) => Some(n),
            _ => None,
        }
    }

    /// User table `name` (matched as table names are) as Dolt stores it, if the state has it.
    pub(crate) fn dolt_table(&self, name: &str) -> Result<Option<prollystore_dolt::Table>> {
        let Some(stored) = self.user_table(name) else {
            return Ok(None);
        };
        self.db
            .table(&self.root, &stored)
            .map(Some)
            .map_err(dolt_error)
    }

    fn open(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        if let Some(stored) = self.user_table(name) {
            let table = self.db.table(&self.root, &stored).map_err(dolt_error)?;
            return Ok(Some(Arc::new(DoltTable::new(self.db.clone(), table))));
        }
        system::table(&self.db, &self.origin, &self.root, name, |t| {
            self.user_table(t)
        })
    }
}

#[async_trait]
impl SchemaProvider for DoltSchema {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn table_names(&self) -> Vec<String> {
        let user = self.root.table_names();
        let mut names = system::names(&user);
        names.extend(user);
        names.extend(
            self.registered
                .lock()
                .expect("registry poisoned")
                .keys()
                .cloned(),
        );
        names
    }

    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>, DataFusionError> {
        if let Some(t) = self.registered.lock().expect("registry poisoned").get(name) {
            return Ok(Some(t.clone()));
        }
        let key = name.to_ascii_lowercase();
        if let Some(t) = self.tables.lock().expect("table cache poisoned").get(&key) {
            return Ok(Some(t.clone()));
        }
        let opened = self.open(name)?;
        if let Some(t) = &opened {
            self.tables
                .lock()
                .expect("table cache poisoned")
                .insert(key, t.clone());
        }
        Ok(opened)
    }

    fn table_exist(&self, name: &str) -> bool {
        self.registered
            .lock()
            .expect("registry poisoned")
            .contains_key(name)
            || self.user_table(name).is_some()
            || system::exists(name, |t| self.user_table(t))
    }

    /// Registers a table of the caller's beside the state's (a name of the state's own is
    /// refused: the state's tables are not replaced).
    fn register_table(
        &self,
        name: String,
        table: Arc<dyn TableProvider>,
    ) -> Result<Option<Arc<dyn TableProvider>>> {
        if self.user_table(&name).is_some() || system::exists(&name, |t| self.user_table(t)) {
            return Err(DataFusionError::Plan(format!(
                "table {name:?} is a table of state {}: register it under another name",
                self.origin.at
            )));
        }
        Ok(self
            .registered
            .lock()
            .expect("registry poisoned")
            .insert(name, table))
    }

    fn deregister_table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        Ok(self
            .registered
            .lock()
            .expect("registry poisoned")
            .remove(name))
    }
}
