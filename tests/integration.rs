//! The one integration-test binary: every file here runs the real `fixity` executable.
//! Linux only: the peers, FUSE, PostgreSQL and Slurm it runs against are there; what
//! must hold on every system is tests/platforms.rs, which Windows runs too.
#![cfg(target_os = "linux")]

mod architecture;
mod bag;
mod bag_rfc;
mod bench;
mod browser;
mod catalog;
mod cfv;
mod check;
mod cloud;
mod crosscheck;
mod differential;
mod differential_b3x;
mod dropin;
mod dups;
mod edits;
mod faults;
mod fleet;
mod golden;
mod hash;
mod hashdeep;
mod import;
mod json;
mod manual;
mod monitor;
mod parts;
mod pgtls;
mod pgtls_matrix;
mod pieces;
mod plan;
mod proof;
mod remote;
mod repair;
mod report;
mod rhash;
mod roles;
mod roundtrip;
mod safety;
mod scale;
mod serve;
mod simd;
mod sparse;
mod storage;
mod subtree;
mod upstream;
mod util;
mod writers;
