//! Benchmarks of msp-codegen and msp-types.
