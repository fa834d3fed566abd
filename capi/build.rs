//! The shared library answers to the name C programs linked against OpenPMIx ask the loader
//! for: SONAME `libpmix.so.2`.

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libpmix.so.2");
}
