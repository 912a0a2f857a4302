//! The engine: what the mesh looks like right now (coverage ∩ operator
//! state ∩ health), and — in later modules — quoting, ranking and
//! execution. It never names a rail: everything comes from the loaded
//! plugins.

pub mod health;
pub mod mesh;
pub mod request;
pub mod select;
