//! Building blocks shared by every generated type: the tri-state field, string enums,
//! validation reports and the small pattern matcher behind `validate()`.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// An optional member that may also be `null`: absent, `null` and a value stay apart.
///
/// Fields of this type are left out of the encoding when [`Tristate::Absent`], written as
/// `null` when [`Tristate::Null`], and as the value otherwise.
///
/// ```
/// use msp_types::Tristate;
///
/// let cursor: Tristate<String> = Tristate::Value("v:7".into());
/// assert_eq!(cursor.as_value().map(String::as_str), Some("v:7"));
/// assert!(Tristate::<String>::Absent.is_absent());
/// // `null` and absent both carry no value; only the encoding tells them apart.
/// assert_eq!(Tristate::<String>::Null.into_option(), None);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tristate<T> {
    /// The member is not on the wire.
    #[default]
    Absent,
    /// The member is on the wire as `null`.
    Null,
    /// The member is on the wire with a value.
    Value(T),
}

impl<T> Tristate<T> {
    /// Whether the member is absent; used to leave it out of the encoding.
    pub fn is_absent(&self) -> bool {
        matches!(self, Tristate::Absent)
    }

    /// The value, if there is one.
    pub fn as_value(&self) -> Option<&T> {
        match self {
            Tristate::Value(value) => Some(value),
            _ => None,
        }
    }

    /// The value, if there is one, dropping the difference between absent and `null`.
    pub fn into_option(self) -> Option<T> {
        match self {
            Tristate::Value(value) => Some(value),
            _ => None,
        }
    }
}

impl<T> From<Option<T>> for Tristate<T> {
    /// `None` becomes `null` on the wire: an explicit value of "nothing".
    fn from(value: Option<T>) -> Self {
        value.map_or(Tristate::Null, Tristate::Value)
    }
}

impl<T: Serialize> Serialize for Tristate<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Tristate::Value(value) => value.serialize(serializer),
            Tristate::Absent | Tristate::Null => serializer.serialize_none(),
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Tristate<T> {
    // Only called when the member is present; absence comes from `#[serde(default)]`.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Option::<T>::deserialize(deserializer).map(Tristate::from)
    }
}

/// A required member a builder has not been given yet: `build()` compiles once no member's slot
/// is `Unset` (else the error names each member still missing).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Unset;

/// A builder slot holding required member `Member` of type `T`: a slot that was set (it holds
/// the `T`) does, [`Unset`] does not, and a `build()` with a member missing says which
/// (`Member` is a marker named after it, in the output's `members`).
#[diagnostic::on_unimplemented(
    message = "the builder is missing the member `{Member}`",
    label = "`{Member}` is not set",
    note = "set every required member before `build()`"
)]
pub trait Has<Member, T> {
    /// The member's value.
    fn value(self) -> T;
}

impl<Member, T> Has<Member, T> for T {
    #[inline]
    fn value(self) -> T {
        self
    }
}

/// A string enumeration of the schema, open or closed.
pub trait StringEnum: Sized {
    /// The schema name of the type, used in error messages.
    const TYPE_NAME: &'static str;
    /// Every value this version of the schema lists, in schema order.
    const KNOWN_VALUES: &'static [&'static str];
    /// The variant for a listed value.
    fn from_known(value: &str) -> Option<Self>;
    /// The variant for an unlisted value: `Some` for open enums, `None` for closed ones.
    fn from_unknown(value: &str) -> Option<Self>;
    /// The wire value.
    fn as_str(&self) -> &str;

    /// Parses a wire value, rejecting an unlisted one when the enum is closed.
    fn parse_wire(value: &str) -> Result<Self, UnknownValue> {
        Self::from_known(value)
            .or_else(|| Self::from_unknown(value))
            .ok_or_else(|| UnknownValue {
                type_name: Self::TYPE_NAME,
                value: value.to_owned(),
                expected: Self::KNOWN_VALUES,
            })
    }
}

/// A value that a closed enumeration does not list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownValue {
    /// The schema name of the enumeration.
    pub type_name: &'static str,
    /// The value that was given.
    pub value: String,
    /// The values the enumeration accepts.
    pub expected: &'static [&'static str],
}

impl fmt::Display for UnknownValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown {} value `{}`, expected one of: {}",
            self.type_name,
            self.value,
            self.expected.join(", ")
        )
    }
}

impl std::error::Error for UnknownValue {}

/// Deserializes a string enum without allocating for listed values.
pub fn deserialize_string_enum<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: StringEnum,
{
    struct EnumVisitor<T>(std::marker::PhantomData<T>);

    impl<T: StringEnum> Visitor<'_> for EnumVisitor<T> {
        type Value = T;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "a {} string", T::TYPE_NAME)
        }

        fn visit_str<E: de::Error>(self, value: &str) -> Result<T, E> {
            T::parse_wire(value).map_err(E::custom)
        }
    }

    deserializer.deserialize_str(EnumVisitor(std::marker::PhantomData))
}

/// A member name as a generated struct's decoder reads it: borrowed from the input when the
/// input allows, so that known names cost no allocation.
pub struct Key<'de>(Cow<'de, str>);

impl Key<'_> {
    /// The member name.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The member name as an owned string.
    pub fn into_string(self) -> String {
        self.0.into_owned()
    }
}

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;

        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }

            fn visit_borrowed_str<E: de::Error>(self, value: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(value)))
            }

            fn visit_str<E: de::Error>(self, value: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(value.to_owned())))
            }

            fn visit_string<E: de::Error>(self, value: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(value)))
            }
        }

        deserializer.deserialize_str(KeyVisitor)
    }
}

/// Reads a member's value into `slot`; a member given twice is an error, as with serde's derive.
#[inline]
pub fn put<'de, T, A>(slot: &mut Option<T>, map: &mut A, member: &'static str) -> Result<(), A::Error>
where
    T: Deserialize<'de>,
    A: MapAccess<'de>,
{
    if slot.is_some() {
        return Err(de::Error::duplicate_field(member));
    }
    *slot = Some(map.next_value()?);
    Ok(())
}

/// Keeps a member the schema does not define, with its value as sent.
#[inline]
pub fn keep<'de, A: MapAccess<'de>>(
    unknown: &mut serde_json::Map<String, serde_json::Value>,
    key: Key<'de>,
    map: &mut A,
) -> Result<(), A::Error> {
    let value = map.next_value()?;
    unknown.insert(key.into_string(), value);
    Ok(())
}

/// The unknown members of a struct being decoded.
pub type Unknown = serde_json::Map<String, serde_json::Value>;

/// A required member's value, or serde's missing-field error naming it.
#[inline]
pub fn required<T, E: de::Error>(slot: Option<T>, member: &'static str) -> Result<T, E> {
    slot.ok_or_else(|| E::missing_field(member))
}

/// A required nullable member: absent and `null` both read as `None` (written as `null`).
#[inline]
pub fn nullable<T>(slot: Option<Option<T>>, _member: &'static str, _: &mut Unknown) -> Option<T> {
    slot.flatten()
}

/// An optional member the schema does not make nullable: absent reads as `None`. A `null` sent
/// for it reads as `None` as well and is kept among the unknown members under its name, so
/// that re-encoding writes it again (nothing read is lost).
#[inline]
pub fn optional<T>(slot: Option<Option<T>>, member: &'static str, unknown: &mut Unknown) -> Option<T> {
    match slot {
        Some(None) => {
            unknown.insert(member.to_owned(), serde_json::Value::Null);
            None
        }
        slot => slot.flatten(),
    }
}

/// An optional nullable member: absent stays apart from `null`.
#[inline]
pub fn tristate<T>(slot: Option<Tristate<T>>, _member: &'static str, _: &mut Unknown) -> Tristate<T> {
    slot.unwrap_or_default()
}

// msp-codegen: begin structs (left out of an output without structs)
/// `Serialize` and `Deserialize` for a generated struct, from one entry a member (`required`,
/// `nullable`, `optional` or `tristate`, the field, its wire name). Decoding reads members in
/// one pass: known names straight into their fields, the rest into the unknown-members map
/// (`#[serde(flatten)]` would buffer every member before sorting them out). Encoding writes the
/// members in order, an absent optional one left out and a required nullable one as `null`,
/// then the unknown members.
macro_rules! impl_serde {
    ($name:ident { $($(#[$gate:meta])* $kind:ident $field:ident = $wire:literal,)* } $unknown:ident) => {
        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> ::std::result::Result<S::Ok, S::Error> {
                use ::serde::ser::SerializeMap;
                let mut map = serializer.serialize_map(None)?;
                $($(#[$gate])* $crate::support::impl_serde!(@write map $kind $wire &self.$field);)*
                // An unknown member under a known member's name (a `null` read for an optional
                // one, since set) gives way to the member written above: no name twice.
                #[allow(unreachable_patterns)]
                let written = |member: &str| match member {
                    $($(#[$gate])* $wire => $crate::support::impl_serde!(@written $kind &self.$field),)*
                    _ => false,
                };
                for (member, value) in &self.$unknown {
                    if !written(member) {
                        map.serialize_entry(member, value)?;
                    }
                }
                map.end()
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> ::std::result::Result<Self, D::Error> {
                struct Members;

                impl<'de> ::serde::de::Visitor<'de> for Members {
                    type Value = $name;

                    fn expecting(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                        f.write_str(concat!("a `", stringify!($name), "` object"))
                    }

                    #[allow(clippy::match_single_binding)]
                    fn visit_map<A: ::serde::de::MapAccess<'de>>(self, mut map: A) -> ::std::result::Result<$name, A::Error> {
                        // The members read so far, one value: every early exit drops it with
                        // one call (a local a member is dropped one by one at each exit, code
                        // quadratic in the members).
                        #[allow(non_camel_case_types)]
                        struct Slots<$($(#[$gate])* $field,)*> {
                            $($(#[$gate])* $field: Option<$field>,)*
                        }
                        #[allow(unused_mut, unused_variables)]
                        let mut slots = Slots { $($(#[$gate])* $field: None,)* };
                        let mut unknown = ::serde_json::Map::new();
                        while let Some(key) = map.next_key::<$crate::support::Key<'de>>()? {
                            let read = match key.as_str() {
                                $($(#[$gate])* $wire => $crate::support::put(&mut slots.$field, &mut map, $wire),)*
                                _ => $crate::support::keep(&mut unknown, key, &mut map),
                            };
                            read?;
                        }
                        // Only a required member can be missing; `take` keeps `slots` whole.
                        $($(#[$gate])* $crate::support::impl_serde!(@required $kind $field slots $wire);)*
                        Ok($name {
                            $($(#[$gate])* $field: $crate::support::impl_serde!(@take $kind $field slots $wire unknown),)*
                            $unknown: unknown,
                        })
                    }
                }

                deserializer.deserialize_map(Members)
            }
        }
    };
    (@required required $field:ident $slots:ident $wire:literal) => {
        let $field = $crate::support::required($slots.$field.take(), $wire)?;
    };
    (@required $kind:ident $field:ident $slots:ident $wire:literal) => {};
    (@take required $field:ident $slots:ident $wire:literal $unknown:ident) => {
        $field
    };
    (@take $kind:ident $field:ident $slots:ident $wire:literal $unknown:ident) => {
        $crate::support::$kind($slots.$field, $wire, &mut $unknown)
    };
    (@write $map:ident required $wire:literal $value:expr) => {
        $map.serialize_entry($wire, $value)?
    };
    (@write $map:ident nullable $wire:literal $value:expr) => {
        $map.serialize_entry($wire, $value)?
    };
    (@write $map:ident optional $wire:literal $value:expr) => {
        if let Some(value) = $value {
            $map.serialize_entry($wire, value)?;
        }
    };
    (@write $map:ident tristate $wire:literal $value:expr) => {
        if !$value.is_absent() {
            $map.serialize_entry($wire, $value)?;
        }
    };
    (@written required $value:expr) => {
        true
    };
    (@written nullable $value:expr) => {
        true
    };
    (@written optional $value:expr) => {
        $value.is_some()
    };
    (@written tristate $value:expr) => {
        !$value.is_absent()
    };
}

pub(crate) use impl_serde;

/// A generated struct's builder, from one entry per member: `builder()`, the builder type,
/// a setter per member and `build()`. The builder's type parameter is a tuple with a slot per
/// required member, [`Unset`] until its setter ran (then the member's type), so `build()`
/// compiles once every slot holds its member ([`Has`] names a missing one).
///
/// Required entries: `TYPE_PARAM field setter: Into => Stored, "wire", marker;` in order;
/// optional ones: `#[gate]* kind field setter [null_setter]: Into => Stored, "wire";` with
/// `kind` one of `nullable` (required and nullable: `null` until set), `optional` and
/// `tristate` (which has the null setter). `Stored` is made `From` the `Into` type (a `Box`
/// of it, or the type itself).
macro_rules! builder {
    (
        $(#[$gate:meta])*
        $name:ident, $builder:ident, $rest:ident, $unknown:ident, $doc:literal;
        required [$($p:ident $field:ident $setter:ident: $into:ty => $stored:ty, $wire:literal, $marker:ident;)*]
        optional [$($(#[$fgate:meta])* $kind:ident $ofield:ident $osetter:ident $([$null:ident])?: $ointo:ty => $ostored:ty, $owire:literal;)*]
    ) => {
        $(#[$gate])*
        impl $name {
            #[doc = concat!(" Starts a [`", stringify!($builder), "`]; every member is set by name.")]
            #[inline]
            pub fn builder() -> $builder {
                $builder {
                    required: ($($crate::support::unset!($p),)*),
                    rest: $rest {
                        $($(#[$fgate])* $ofield: $crate::support::builder_slot!(@empty $kind),)*
                        $unknown: ::serde_json::Map::new(),
                    },
                }
            }
        }

        $(#[$gate])*
        #[doc = $doc]
        #[must_use]
        pub struct $builder<R = ($($crate::support::unset!($p),)*)> {
            required: R,
            rest: $rest,
        }

        $(#[$gate])*
        struct $rest {
            $($(#[$fgate])* $ofield: $crate::support::builder_slot!(@type $kind $ostored),)*
            $unknown: ::serde_json::Map<String, ::serde_json::Value>,
        }

        $crate::support::builder!(@required $(#[$gate])* $builder [] [$($p $field $setter: $into => $stored, $wire;)*]);

        $(#[$gate])*
        impl<R> $builder<R> {
            $($crate::support::builder_slot!(@setter $(#[$fgate])* $kind $ofield $osetter $([$null])?: $ointo => $ostored, $owire);)*

            /// Adds a member this version of the schema does not define, written as given.
            pub fn unknown_member(mut self, name: impl Into<String>, value: ::serde_json::Value) -> Self {
                self.rest.$unknown.insert(name.into(), value);
                self
            }
        }

        $(#[$gate])*
        impl<$($p,)*> $builder<($($p,)*)> {
            /// The value, every required member set (else the compile error names each one
            /// missing).
            #[inline]
            pub fn build(self) -> $name
            where
                $($p: $crate::support::Has<$crate::members::$marker, $stored>,)*
            {
                let ($($field,)*) = self.required;
                let rest = self.rest;
                $name {
                    $($field: $field.value(),)*
                    $($(#[$fgate])* $ofield: rest.$ofield,)*
                    $unknown: rest.$unknown,
                }
            }
        }
    };
    // The required members' setters, one at a time: those before it keep their slots' types.
    (@required $(#[$gate:meta])* $builder:ident [$($dp:ident $df:ident)*] []) => {};
    (
        @required $(#[$gate:meta])* $builder:ident [$($dp:ident $df:ident)*]
        [$p:ident $field:ident $setter:ident: $into:ty => $stored:ty, $wire:literal; $($np:ident $nf:ident $ns:ident: $ni:ty => $nt:ty, $nw:literal;)*]
    ) => {
        $(#[$gate])*
        impl<$($dp,)* $($np,)*> $builder<($($dp,)* $crate::support::Unset, $($np,)*)> {
            #[doc = concat!(" Sets `", $wire, "`.")]
            pub fn $setter(self, $field: impl Into<$into>) -> $builder<($($dp,)* $stored, $($np,)*)> {
                let ($($df,)* _, $($nf,)*) = self.required;
                let $field: $into = $field.into();
                $builder { required: ($($df,)* <$stored>::from($field), $($nf,)*), rest: self.rest }
            }
        }
        $crate::support::builder!(@required $(#[$gate])* $builder [$($dp $df)* $p $field] [$($np $nf $ns: $ni => $nt, $nw;)*]);
    };
}

pub(crate) use builder;

/// `Unset`, once for each type parameter (a builder's empty slots); unused where no struct has
/// a required member.
#[allow(unused_macros)]
macro_rules! unset {
    ($p:ident) => {
        $crate::support::Unset
    };
}

#[allow(unused_imports)]
pub(crate) use unset;

/// A builder's slot of a member that is not required: its type, empty value and setters;
/// unused where no struct has such a member.
#[allow(unused_macros)]
macro_rules! builder_slot {
    (@type tristate $t:ty) => { $crate::Tristate<$t> };
    (@type $kind:ident $t:ty) => { ::std::option::Option<$t> };
    (@empty tristate) => { $crate::Tristate::Absent };
    (@empty $kind:ident) => { ::std::option::Option::None };
    (@setter $(#[$fgate:meta])* tristate $field:ident $setter:ident [$null:ident]: $into:ty => $t:ty, $wire:literal) => {
        #[doc = concat!(" Sets to a value (else it is left out) `", $wire, "`.")]
        $(#[$fgate])*
        pub fn $setter(mut self, $field: impl Into<$into>) -> Self {
            let $field: $into = $field.into();
            self.rest.$field = $crate::Tristate::Value(<$t>::from($field));
            self
        }
        #[doc = concat!(" Sets `", $wire, "` to `null` (else it is left out).")]
        $(#[$fgate])*
        pub fn $null(mut self) -> Self {
            self.rest.$field = $crate::Tristate::Null;
            self
        }
    };
    (@setter $(#[$fgate:meta])* nullable $field:ident $setter:ident: $into:ty => $t:ty, $wire:literal) => {
        $crate::support::builder_slot!(@some $(#[$fgate])* $field $setter: $into => $t, concat!(" Sets (else it is written as `null`) `", $wire, "`."));
    };
    (@setter $(#[$fgate:meta])* optional $field:ident $setter:ident: $into:ty => $t:ty, $wire:literal) => {
        $crate::support::builder_slot!(@some $(#[$fgate])* $field $setter: $into => $t, concat!(" Sets (else it is left out) `", $wire, "`."));
    };
    (@some $(#[$fgate:meta])* $field:ident $setter:ident: $into:ty => $t:ty, $doc:expr) => {
        #[doc = $doc]
        $(#[$fgate])*
        pub fn $setter(mut self, $field: impl Into<$into>) -> Self {
            let $field: $into = $field.into();
            self.rest.$field = ::std::option::Option::Some(<$t>::from($field));
            self
        }
    };
}

#[allow(unused_imports)]
pub(crate) use builder_slot;
// msp-codegen: end structs

/// One broken constraint found by `validate()`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// JSON pointer of the offending member, relative to the validated value.
    pub pointer: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pointer = if self.pointer.is_empty() { "/" } else { &self.pointer };
        write!(f, "{pointer}: {}", self.message)
    }
}

/// Checks of the schema's constraints (`pattern`, bounds, `multipleOf`, sizes, `uniqueItems`,
/// `dependentRequired`).
///
/// Decoding stays tolerant; call `validate()` where the constraints matter.
pub trait Validate {
    /// Appends every violation under `pointer` to `out`.
    fn validate_into(&self, pointer: &str, out: &mut Vec<Violation>) {
        let _ = (pointer, out);
    }

    /// Every violation in this value, with its JSON pointer.
    fn validate(&self) -> Result<(), Vec<Violation>> {
        let mut out = Vec::new();
        self.validate_into("", &mut out);
        if out.is_empty() {
            Ok(())
        } else {
            Err(out)
        }
    }
}

impl<T: Validate> Validate for Option<T> {
    fn validate_into(&self, pointer: &str, out: &mut Vec<Violation>) {
        if let Some(value) = self {
            value.validate_into(pointer, out);
        }
    }
}

impl<T: Validate> Validate for Tristate<T> {
    fn validate_into(&self, pointer: &str, out: &mut Vec<Violation>) {
        if let Tristate::Value(value) = self {
            value.validate_into(pointer, out);
        }
    }
}

impl<T: Validate> Validate for Box<T> {
    fn validate_into(&self, pointer: &str, out: &mut Vec<Violation>) {
        (**self).validate_into(pointer, out);
    }
}

impl<T: Validate> Validate for Vec<T> {
    fn validate_into(&self, pointer: &str, out: &mut Vec<Violation>) {
        for (index, value) in self.iter().enumerate() {
            value.validate_into(&format!("{pointer}/{index}"), out);
        }
    }
}

impl<T: Validate> Validate for std::collections::BTreeMap<String, T> {
    fn validate_into(&self, pointer: &str, out: &mut Vec<Violation>) {
        for (key, value) in self {
            value.validate_into(&pointer_push(pointer, key), out);
        }
    }
}

/// Whether `value` is a whole multiple of `step` (within the rounding of `f64`).
pub fn is_multiple(value: f64, step: f64) -> bool {
    let quotient = value / step;
    (quotient - quotient.round()).abs() <= 1e-9 * quotient.abs().max(1.0)
}

/// The indexes of the first two equal items, if any.
pub fn first_duplicate<T: PartialEq>(items: &[T]) -> Option<(usize, usize)> {
    (0..items.len()).find_map(|j| (0..j).find(|&i| items[i] == items[j]).map(|i| (i, j)))
}

/// `pointer` extended by one member name, escaped as RFC 6901 asks.
pub fn pointer_push(pointer: &str, member: &str) -> String {
    format!("{pointer}/{}", member.replace('~', "~0").replace('/', "~1"))
}

/// Writes `body` as an object with the member `tag` set to `value`.
pub fn serialize_tagged<S: Serializer, T: Serialize>(
    serializer: S,
    tag: &str,
    value: &str,
    body: &T,
) -> Result<S::Ok, S::Error> {
    let mut object = match serde_json::to_value(body).map_err(serde::ser::Error::custom)? {
        serde_json::Value::Object(object) => object,
        _ => return Err(serde::ser::Error::custom("a tagged union arm must encode as an object")),
    };
    object.insert(tag.to_owned(), serde_json::Value::String(value.to_owned()));
    object.serialize(serializer)
}

/// Decodes the rest of a tagged union's object (the tag removed) as one arm.
pub fn deserialize_arm<T: serde::de::DeserializeOwned, E: de::Error>(
    object: serde_json::Map<String, serde_json::Value>,
) -> Result<T, E> {
    serde_json::from_value(serde_json::Value::Object(object)).map_err(E::custom)
}

// msp-codegen: begin string enums (left out of an output without string enums)
/// Everything a generated string enum has besides its declaration: `KNOWN_VALUES`, `as_str`,
/// [`StringEnum`], `Display`, `FromStr`, serde, `Validate` and (feature `sample`) `Sample`.
/// `open Unknown` keeps unlisted values in the `Unknown` variant; `closed` rejects them.
macro_rules! impl_string_enum {
    ($name:ident $type_name:literal { $($variant:ident = $wire:literal,)+ } open $unknown:ident) => {
        $crate::support::impl_string_enum!(@impl $name $type_name { $($variant = $wire,)+ } |value, g|
            as_str [$name::$unknown(value) => value,]
            from_unknown [Some($name::$unknown(value.to_owned()))]
            sample [match LISTED.get(g.below(LISTED.len() + 1)) {
                Some(listed) => listed.clone(),
                None => $name::$unknown(g.unknown_value($name::KNOWN_VALUES)),
            }]
        );
    };
    ($name:ident $type_name:literal { $first:ident = $first_wire:literal, $($variant:ident = $wire:literal,)* } closed) => {
        $crate::support::impl_string_enum!(@impl $name $type_name { $first = $first_wire, $($variant = $wire,)* } |value, g|
            as_str []
            from_unknown [{
                let _ = value;
                None
            }]
            sample [LISTED.get(g.below(LISTED.len())).copied().unwrap_or($name::$first)]
        );
    };
    (@impl $name:ident $type_name:literal { $($variant:ident = $wire:literal,)+ } |$value:ident, $g:ident|
        as_str [$($unknown_arm:tt)*] from_unknown [$($from_unknown:tt)*] sample [$($sample:tt)*]) => {
        impl $name {
            /// Every value this version of the schema lists.
            pub const KNOWN_VALUES: &'static [&'static str] = &[$($wire),+];

            /// The wire value.
            pub fn as_str(&self) -> &str {
                match self {
                    $($name::$variant => $wire,)+
                    $($unknown_arm)*
                }
            }
        }

        impl $crate::StringEnum for $name {
            const TYPE_NAME: &'static str = $type_name;
            const KNOWN_VALUES: &'static [&'static str] = $name::KNOWN_VALUES;

            fn from_known(value: &str) -> Option<Self> {
                match value {
                    $($wire => Some($name::$variant),)+
                    _ => None,
                }
            }

            fn from_unknown($value: &str) -> Option<Self> {
                $($from_unknown)*
            }

            fn as_str(&self) -> &str {
                $name::as_str(self)
            }
        }

        #[cfg(feature = "sample")]
        impl $crate::sample::Sample for $name {
            fn sample($g: &mut $crate::sample::Sampler) -> Self {
                const LISTED: &[$name] = &[$($name::$variant),+];
                $($sample)*
            }
        }

        $crate::support::impl_string_enum!(@text $name);
    };
    (@text $name:ident) => {
        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = $crate::UnknownValue;

            fn from_str(value: &str) -> ::std::result::Result<Self, Self::Err> {
                <Self as $crate::StringEnum>::parse_wire(value)
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> ::std::result::Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> ::std::result::Result<Self, D::Error> {
                $crate::support::deserialize_string_enum(deserializer)
            }
        }

        impl $crate::Validate for $name {}
    };
}

pub(crate) use impl_string_enum;
// msp-codegen: end string enums
