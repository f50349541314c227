use super::*;

#[test]
fn lookup_accepts_user_spellings() {
    assert_eq!(lookup("SHA-256").unwrap().name, "sha256");
    assert_eq!(lookup("b3").unwrap().name, "blake3");
    assert_eq!(lookup("xxh3_128").unwrap().name, "xxh128");
}
