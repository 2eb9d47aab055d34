//! Transcript conformance for msp-types.
