//! The one integration-test binary: every file here runs the real `fixity` executable.

mod util;
