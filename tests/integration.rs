//! The one integration-test binary: every file here runs the real `fixity` executable.

mod architecture;
mod bag;
mod bench;
mod catalog;
mod cfv;
mod check;
mod crosscheck;
mod differential;
mod differential_b3x;
mod dropin;
mod faults;
mod fleet;
mod golden;
mod hash;
mod hashdeep;
mod parts;
mod pieces;
mod plan;
mod rhash;
mod roundtrip;
mod safety;
mod scale;
mod storage;
mod upstream;
mod util;
mod writers;
