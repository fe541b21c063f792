//! Any bytes a client can send: decoding yields a message or a typed error, never a panic; a
//! decoded message survives re-encoding.
#![no_main]

use grand_melee_protocol::{MAX_CLIENT_MESSAGE_BYTES, decode_client, decode_server, encode_client};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(message) = decode_client(data) {
        let again = encode_client(&message);
        if again.len() <= MAX_CLIENT_MESSAGE_BYTES {
            assert_eq!(decode_client(&again).ok(), Some(message));
        }
    }
    let _ = decode_server(data);
});
