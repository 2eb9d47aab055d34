//! Decode and encode a payload as a type chosen at run time, through plain function pointers,
//! so that a bench loop pays no name lookup per payload.

use std::any::Any;

use serde::de::DeserializeOwned;
use serde::Serialize;

/// Functions for one Rust type `T`.
#[derive(Clone, Copy)]
pub struct Codec {
    /// JSON text to a boxed `T`.
    pub decode: fn(&str) -> serde_json::Result<Box<dyn Any>>,
    /// JSON text to `T`, dropped at once (what the decode benches time).
    pub check: fn(&str) -> serde_json::Result<()>,
    /// A boxed `T` (from `decode`) to JSON text.
    pub encode: fn(&dyn Any, &mut Vec<u8>) -> serde_json::Result<()>,
}

impl Codec {
    /// The functions for `T`.
    pub fn of<T: Serialize + DeserializeOwned + 'static>() -> Self {
        Codec {
            decode: decode_as::<T>,
            check: check_as::<T>,
            encode: encode_as::<T>,
        }
    }
}

fn decode_as<T: DeserializeOwned + 'static>(text: &str) -> serde_json::Result<Box<dyn Any>> {
    Ok(Box::new(serde_json::from_str::<T>(text)?))
}

fn check_as<T: DeserializeOwned>(text: &str) -> serde_json::Result<()> {
    serde_json::from_str::<T>(text).map(drop)
}

fn encode_as<T: Serialize + 'static>(value: &dyn Any, out: &mut Vec<u8>) -> serde_json::Result<()> {
    let value = value
        .downcast_ref::<T>()
        .expect("encode is only given what its own decode made");
    serde_json::to_writer(out, value)
}

/// The msp-types type of schema definition `name`.
pub fn msp(name: &str) -> Option<Codec> {
    struct Of;
    impl msp_types::reflect::WithType for Of {
        type Output = Codec;
        fn call<T: Serialize + DeserializeOwned + msp_types::Validate + 'static>(self) -> Codec {
            Codec::of::<T>()
        }
    }
    msp_types::reflect::with_type(name, Of)
}

/// typify's type for definition `name` of the experimental bundle; `None` when this build has
/// no typify output (see `build.rs`).
pub fn typify(name: &str) -> Option<Codec> {
    #[cfg(typify_bundle)]
    return crate::typify_types::codec(name);
    #[cfg(not(typify_bundle))]
    {
        let _ = name;
        None
    }
}

/// typify's type for definition `name` of our own schema; `None` when this build has no typify
/// output for it (see `build.rs`).
pub fn typify_schema(name: &str) -> Option<Codec> {
    #[cfg(typify_schema)]
    return crate::typify_schema_types::codec(name);
    #[cfg(not(typify_schema))]
    {
        let _ = name;
        None
    }
}
