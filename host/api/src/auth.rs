//! Operator authority, as the API's handlers check it: the one check
//! lives with every feature's registration ([`relay_feature::operator`]).

pub use relay_feature::operator::*;
