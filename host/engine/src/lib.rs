//! The engine: what the mesh looks like right now (coverage ∩ operator
//! state ∩ health), best-of-N quoting with fee netting and ranking, the
//! comparison view, and execution's choice of rail. It never names a rail:
//! everything comes from the loaded plugins.
//!
//! Quoting (spec §2.5, §2.6, §2.9, §8.2) is split by concern: [`tokens`],
//! [`address`] and [`route`] turn a RouteRequest into typed values;
//! [`quote`] finds the applicable rails and fans out; [`fees`] (pure maths),
//! [`prices`] (through the [`oracle`] price book: on-chain feeds), chain reads (`relay_chain::reader`) and [`membership`] net each answer; [`rank`]
//! orders them; [`attest`] signs the winner; [`compare`] assesses them;
//! [`execute`] walks the ranking for an execute and fails over.
//! [`quotebook`] keeps warm lanes' answers fresh in the background (within
//! [`budget`]'s per-rail request budgets) so a warm quote answers from
//! memory; [`latency`] tracks each rail's p50/p90 and sets the cold
//! fan-out's soft deadline; [`inflight`] keeps one live fan-out per lane
//! in flight, its answers served to every request that waited for it.
//!
//! Discovery (spec §4.1): [`gasless`], [`pricefeeds`], [`floatinfo`],
//! [`snapshot`], [`delivery`] and [`uptime`] derive the read-only answers.
//!
//! Read-only routing helpers (spec §2.10, §2.11, §2.14, §4.2, §4.3):
//! [`preflight`] (blockers and warnings), [`plan`] (multi-step totals and
//! constraints), [`solve`] (sources ranked by goal), [`intent`] (the
//! agent's sentence parser), [`submit`] (the execute body and Permit2 sign
//! request handed back) and [`recent`] (the anonymised feed).

pub mod address;
pub mod alarm;
pub mod answer;
pub mod attest;
pub mod budget;
pub mod compare;
pub mod delivery;
pub mod error;
pub mod execute;
pub mod fees;
pub mod floatinfo;
pub mod gasbook;
pub mod gasless;
pub mod health;
pub mod inflight;
pub mod intent;
pub mod latency;
pub mod membership;
pub mod mesh;
pub mod oracle;
pub mod plan;
pub mod preflight;
pub mod pricefeeds;
pub mod prices;
pub mod quote;
pub mod quotebook;
pub mod rank;
pub mod rates;
pub mod recent;
pub mod request;
pub mod route;
pub mod snapshot;
pub mod solve;
pub mod submit;
pub mod tokens;
pub mod uptime;

pub use error::EngineError;
