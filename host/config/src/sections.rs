//! Feature sections: the configuration a feature owns.
//!
//! A feature keeps its settings in its own home (`[netting]` lives in
//! `host/netting`), so the core's [`HostConfig`](crate::HostConfig) holds
//! every top-level table it does not know itself here, raw, and the feature
//! that claims the table parses it ([`Sections::get`]) with the same
//! coercions as the core (`RELAY_NETTING__CONFIRMATIONS=1` is a number).
//! The host refuses a table no feature claims ([`Sections::unclaimed`]), so
//! a misspelt `[netting]` is an error, not silently the defaults.
//!
//! Only tables are kept: a top-level scalar that is no field of the core —
//! such as `RELAY_RELAYER_KEY`, which the environment source also sees — is
//! dropped here, so it can never be written back out with the
//! configuration.

use std::collections::BTreeMap;

use serde::{de::DeserializeOwned, Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::ConfigError;

/// The top-level tables of the configuration that belong to features, by
/// name, as read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Sections(BTreeMap<String, Value>);

impl<'de> Deserialize<'de> for Sections {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let all = BTreeMap::<String, Value>::deserialize(d)?;
        Ok(Sections(
            all.into_iter().filter(|(_, v)| v.is_object()).collect(),
        ))
    }
}

impl Sections {
    /// Section `name` as the feature's typed settings: its defaults when
    /// the table is absent, every key it names filled in over them.
    pub fn get<T: DeserializeOwned + Default>(&self, name: &str) -> Result<T, ConfigError> {
        let Some(table) = self.0.get(name) else {
            return Ok(T::default());
        };
        let bad = |e: config::ConfigError| ConfigError(format!("[{name}]: {e}"));
        config::Config::try_from(table)
            .and_then(config::Config::try_deserialize)
            .map_err(bad)
    }

    /// Replaces section `name` with `value` (a test's or `relay devnet`'s
    /// settings written before the host starts).
    /// An unset optional setting is left out (TOML has no null).
    pub fn set<T: Serialize>(&mut self, name: &str, value: &T) {
        let mut table = serde_json::to_value(value).expect("a settings struct serialises");
        drop_nulls(&mut table);
        self.0.insert(name.to_owned(), table);
    }

    /// Changes section `name` in place: read (defaults when absent),
    /// `edit`, written back.
    pub fn edit<T: Serialize + DeserializeOwned + Default>(
        &mut self,
        name: &str,
        edit: impl FnOnce(&mut T),
    ) -> Result<(), ConfigError> {
        let mut value = self.get::<T>(name)?;
        edit(&mut value);
        self.set(name, &value);
        Ok(())
    }

    /// The tables none of `claimed` names, as an error naming the first.
    pub fn unclaimed(&self, claimed: &[&str]) -> Result<(), ConfigError> {
        match self.0.keys().find(|k| !claimed.contains(&k.as_str())) {
            Some(name) => Err(ConfigError(format!(
                "[{name}] is not a configuration section of the core or of any feature"
            ))),
            None => Ok(()),
        }
    }
}

/// Removes every null from `value`'s tables, at any depth.
fn drop_nulls(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, v| !v.is_null());
            map.values_mut().for_each(drop_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_nulls),
        _ => {}
    }
}

impl ConfigError {
    /// An error for a setting, in a feature's own words (`netting.confirmations
    /// must be at least 1`).
    pub fn new(message: impl Into<String>) -> Self {
        ConfigError(message.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    struct Demo {
        confirmations: u64,
        chains: Vec<u64>,
        asset: String,
        pay_to: Option<String>,
    }

    fn load(toml: &str, env: &[(&str, &str)]) -> crate::HostConfig {
        let env: std::collections::HashMap<String, String> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        config::Config::builder()
            .add_source(config::File::from_str(toml, config::FileFormat::Toml))
            .add_source(
                config::Environment::with_prefix("RELAY")
                    .separator("__")
                    .prefix_separator("_")
                    .try_parsing(true)
                    .source(Some(env)),
            )
            .build()
            .unwrap()
            .try_deserialize()
            .unwrap()
    }

    #[test]
    fn a_feature_reads_its_table_with_the_environment_over_the_file() {
        let cfg = load(
            "[demo]\nconfirmations = 3\nchains = [1, 10]\n",
            &[("RELAY_DEMO__CONFIRMATIONS", "7")],
        );
        let demo: Demo = cfg.sections.get("demo").unwrap();
        assert_eq!(demo.confirmations, 7);
        assert_eq!(demo.chains, vec![1, 10]);
        assert_eq!(demo.asset, "", "an absent key keeps its default");
    }

    #[test]
    fn an_absent_table_is_the_defaults_and_a_wrong_type_names_the_section() {
        let cfg = load("[demo]\nconfirmations = \"many\"\n", &[]);
        assert_eq!(cfg.sections.get::<Demo>("other").unwrap(), Demo::default());
        let err = cfg.sections.get::<Demo>("demo").unwrap_err().to_string();
        assert!(err.contains("[demo]"), "{err}");
    }

    #[test]
    fn a_secret_in_the_environment_is_never_kept_or_written_out() {
        let cfg = load("", &[("RELAY_RELAYER_KEY", "0xfeedfacekey")]);
        let toml = toml::to_string(&cfg).unwrap();
        assert!(!toml.contains("feedface"), "{toml}");
        assert_eq!(cfg.sections, Sections::default());
    }

    #[test]
    fn a_table_no_feature_claims_is_refused_by_name() {
        let cfg = load("[netting]\nconfirmations = 1\n[nettnig]\nx = 1\n", &[]);
        let err = cfg.sections.unclaimed(&["netting"]).unwrap_err();
        assert!(err.to_string().contains("[nettnig]"), "{err}");
        cfg.sections.unclaimed(&["netting", "nettnig"]).unwrap();
    }

    #[test]
    fn settings_written_by_a_test_survive_the_toml_round_trip() {
        let mut cfg = crate::HostConfig::default();
        cfg.sections
            .edit::<Demo>("demo", |d| d.confirmations = 1)
            .unwrap();
        let back: crate::HostConfig = toml::from_str(&toml::to_string(&cfg).unwrap()).unwrap();
        let demo = back.sections.get::<Demo>("demo").unwrap();
        assert_eq!((demo.confirmations, demo.pay_to), (1, None));
    }
}
