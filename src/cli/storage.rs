//! The storage policy's option (`--storage`, `FIXITY_STORAGE`) and where its value came
//! from, which `--verbose` names in each device's decision.

use fixity::storage::{ForcedBy, Kind};

/// See [`super::ReadArgs::storage`].
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Storage {
    Auto,
    Ssd,
    Hdd,
}

/// Whether the run's `--storage` value came from `FIXITY_STORAGE` (set once by `main`).
static STORAGE_FROM_ENV: std::sync::OnceLock<bool> = std::sync::OnceLock::new();

/// Notes where the command's storage policy came from (clap's value source of
/// `--storage`, in whichever subcommand has it), so `--verbose` names what set it.
pub fn note_storage_source(m: &clap::ArgMatches) {
    let mut m = m;
    loop {
        if m.try_contains_id("storage").unwrap_or(false) {
            let env = m.value_source("storage") == Some(clap::parser::ValueSource::EnvVariable);
            let _ = STORAGE_FROM_ENV.set(env);
            return;
        }
        match m.subcommand() {
            Some((_, sub)) => m = sub,
            None => return,
        }
    }
}

impl Storage {
    /// The policy the user chose instead of probing (none for `auto`), and where they named
    /// it: the storage decisions' evidence says so.
    pub fn forced(self) -> Option<(Kind, ForcedBy)> {
        let by = match STORAGE_FROM_ENV.get() {
            Some(true) => ForcedBy::Env,
            _ => ForcedBy::Option,
        };
        match self {
            Storage::Auto => None,
            Storage::Ssd => Some((Kind::Flash, by)),
            Storage::Hdd => Some((Kind::Seeking, by)),
        }
    }

    /// The policy `FIXITY_STORAGE` names, if set (the drop-ins' only way to name one): an
    /// error for a value that names none.
    pub fn from_env() -> Result<Option<Storage>, String> {
        use clap::ValueEnum;
        match std::env::var("FIXITY_STORAGE") {
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => Err("FIXITY_STORAGE is not UTF-8".into()),
            Ok(v) => Storage::from_str(&v, false).map(Some).map_err(|_| {
                format!("FIXITY_STORAGE: unknown storage policy {v:?} (auto, ssd or hdd)")
            }),
        }
    }
}
