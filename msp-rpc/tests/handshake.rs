//! The handshake against hosts of every kind a client meets: each known release, a recorded
//! fixture, an unknown build, another envelope version, and a result that lacks a member.

mod support;

use msp_rpc::{FingerprintPolicy, HandshakeError, Options, RpcError, Served, Warning};
use msp_types::registry::{
    FIXTURE_FINGERPRINTS, HOST_RELEASES, PROTOCOL_VERSION, SERVED_FINGERPRINT,
};
use msp_types::{ClientInfo, InitializeParams, SessionDurability};
use serde_json::{json, Value};
use support::{connect, initialize_result};

const UNKNOWN: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000000";

/// Opens a connection whose host answers `initialize` with `result`; the handshake's outcome
/// and whether `initialized` followed.
fn handshake(
    policy: FingerprintPolicy,
    result: &str,
) -> (Result<msp_rpc::Handshake, RpcError>, bool) {
    let (conn, mut host) = connect(Options::new().fingerprint_policy(policy));
    let worker = std::thread::spawn({
        let conn = conn.clone();
        move || {
            let me = ClientInfo::builder().name("test").version("0").build();
            let params = InitializeParams::builder().client_info(me).build();
            conn.initialize(&params).cloned()
        }
    });
    let init = host.recv().unwrap();
    host.answer(&init, result);
    let outcome = worker.join().unwrap();
    let initialized = outcome.is_ok() && host.recv().unwrap()["method"] == "initialized";
    (outcome, initialized)
}

fn release(name: &str) -> &'static msp_types::registry::HostRelease {
    HOST_RELEASES.iter().find(|r| r.release == name).unwrap()
}

#[test]
fn hosts_of_each_known_release_are_accepted_without_a_warning() {
    assert_eq!(PROTOCOL_VERSION, Some("1.4.14"));
    for name in ["1.4.13", "1.4.14"] {
        let known = release(name);
        let fingerprints = [known.stable, known.experimental];
        for (experimental, fingerprint) in fingerprints.into_iter().enumerate() {
            let Some(fingerprint) = fingerprint else {
                continue;
            };
            let (outcome, initialized) =
                handshake(FingerprintPolicy::Warn, &initialize_result(fingerprint, 1));
            let handshake = outcome.unwrap();
            assert!(initialized);
            assert_eq!(handshake.host_release(), Some(name));
            assert_eq!(
                handshake.served,
                Served::Release {
                    release: known,
                    experimental: experimental == 1
                }
            );
            assert!(handshake.warnings.is_empty(), "{:?}", handshake.warnings);
            assert!(handshake.result.is_some());
        }
    }
}

#[test]
fn requiring_this_release_refuses_an_older_one_and_requiring_a_known_one_an_unknown_one() {
    let older = release("1.4.13").stable.unwrap();
    let (outcome, initialized) =
        handshake(FingerprintPolicy::Require, &initialize_result(older, 1));
    match outcome {
        Err(RpcError::Handshake(HandshakeError::FingerprintMismatch {
            served, expected, ..
        })) => {
            assert_eq!(served.release(), Some("1.4.13"));
            assert_eq!(expected, "1.4.14");
        }
        other => panic!("{other:?}"),
    }
    assert!(!initialized);
    let newest = SERVED_FINGERPRINT.unwrap();
    let (outcome, _) = handshake(FingerprintPolicy::Require, &initialize_result(newest, 1));
    assert_eq!(outcome.unwrap().host_release(), Some("1.4.14"));
    let (outcome, _) = handshake(
        FingerprintPolicy::RequireKnown,
        &initialize_result(older, 1),
    );
    assert!(outcome.is_ok());
    let (outcome, _) = handshake(
        FingerprintPolicy::RequireKnown,
        &initialize_result(UNKNOWN, 1),
    );
    assert!(matches!(
        outcome,
        Err(RpcError::Handshake(HandshakeError::UnknownFingerprint { served })) if served == UNKNOWN
    ));
}

#[test]
fn an_unknown_fingerprint_is_a_warning_by_default() {
    let (outcome, initialized) = handshake(FingerprintPolicy::Warn, &initialize_result(UNKNOWN, 1));
    let handshake = outcome.unwrap();
    assert!(initialized);
    assert_eq!(handshake.served, Served::Unknown);
    assert_eq!(handshake.host_release(), None);
    assert_eq!(
        handshake.warnings,
        vec![Warning::UnknownFingerprint {
            served: UNKNOWN.into()
        }]
    );
}

#[test]
fn a_transcript_fixtures_fingerprint_is_classified_apart() {
    // What the published golden transcripts' recorded hosts serve.
    let fixture = FIXTURE_FINGERPRINTS[0];
    let (outcome, _) = handshake(
        FingerprintPolicy::RequireKnown,
        &initialize_result(fixture, 1),
    );
    let handshake = outcome.unwrap();
    assert_eq!(handshake.served, Served::Fixture);
    assert_eq!(handshake.host_release(), None);
    assert!(handshake.warnings.is_empty());
    // Not a release: a client that requires this one refuses it.
    let (outcome, _) = handshake_with(FingerprintPolicy::Require, fixture);
    assert!(matches!(
        outcome,
        Err(RpcError::Handshake(HandshakeError::FingerprintMismatch {
            served: Served::Fixture,
            ..
        }))
    ));
}

fn handshake_with(
    policy: FingerprintPolicy,
    fingerprint: &str,
) -> (Result<msp_rpc::Handshake, RpcError>, bool) {
    handshake(policy, &initialize_result(fingerprint, 1))
}

#[test]
fn another_envelope_version_is_refused_whatever_the_fingerprint() {
    for fingerprint in [SERVED_FINGERPRINT.unwrap(), UNKNOWN] {
        let (outcome, initialized) =
            handshake(FingerprintPolicy::Warn, &initialize_result(fingerprint, 2));
        assert!(matches!(
            outcome,
            Err(RpcError::Handshake(HandshakeError::SchemaVersion {
                served: 2,
                expected: 1
            }))
        ));
        assert!(!initialized, "initialized is sent only to an accepted host");
    }
}

#[test]
fn a_result_without_a_required_member_is_accepted_with_a_diagnosis_and_what_decodes_stays_usable() {
    // An older host that does not send `museHome`, which this release requires.
    let older = release("1.4.13").stable.unwrap();
    let mut result: Value = serde_json::from_str(&initialize_result(older, 1)).unwrap();
    result.as_object_mut().unwrap().remove("museHome");
    let (outcome, initialized) = handshake(FingerprintPolicy::Warn, &result.to_string());
    let handshake = outcome.unwrap();
    assert!(
        initialized,
        "the envelope version matches: the handshake is accepted"
    );
    assert!(handshake.result.is_none());
    let [Warning::Incomplete {
        served,
        pointer,
        reason,
    }] = &handshake.warnings[..]
    else {
        panic!("{:?}", handshake.warnings)
    };
    assert_eq!(served.release(), Some("1.4.13"));
    assert_eq!(pointer, "/museHome");
    assert!(reason.contains("museHome"), "{reason}");
    let shown = handshake.warnings[0].to_string();
    assert!(
        shown.contains("1.4.13") && shown.contains("1.4.14") && shown.contains("/museHome"),
        "{shown}"
    );
    // What decodes on its own stays usable.
    assert!(handshake.has_capability("sessionListStream"));
    assert_eq!(
        handshake.session_durability(),
        Some(SessionDurability::Durable)
    );
    assert_eq!(handshake.raw["platformOs"], json!("linux"));
}

#[test]
fn a_result_without_a_readable_schema_is_refused_with_a_reason() {
    let mut result: Value =
        serde_json::from_str(&initialize_result(SERVED_FINGERPRINT.unwrap(), 1)).unwrap();
    result["schema"] = json!({"version": "1"});
    let (outcome, initialized) = handshake(FingerprintPolicy::Warn, &result.to_string());
    assert!(matches!(
        outcome,
        Err(RpcError::Handshake(HandshakeError::NoSchema { .. }))
    ));
    assert!(!initialized);
}

#[test]
fn params_that_break_the_schema_are_refused_before_anything_is_sent() {
    let (conn, mut host) = connect(Options::new());
    let named = |name: &str| {
        let me = ClientInfo::builder().name(name).version("0").build();
        InitializeParams::builder().client_info(me).build()
    };
    let refused = conn.initialize(&named("My-Client"));
    let Err(RpcError::Handshake(HandshakeError::InvalidParams { violations })) = &refused else {
        panic!("refused: {refused:?}");
    };
    assert_eq!(violations.len(), 1);
    assert_eq!(violations[0].pointer, "/clientInfo/name");
    let said = refused.as_ref().unwrap_err().to_string();
    assert!(said.contains("/clientInfo/name"), "{said}");
    // Nothing was sent, nor noted as sent: the same connection opens with a good name.
    let worker = std::thread::spawn({
        let conn = conn.clone();
        move || conn.initialize(&named("my_client")).cloned()
    });
    let init = host.recv().unwrap();
    assert_eq!(init["params"]["clientInfo"]["name"], "my_client");
    host.answer(&init, &initialize_result(UNKNOWN, 1));
    assert!(worker.join().unwrap().is_ok());
}
