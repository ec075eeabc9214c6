use super::*;

#[test]
fn commit_round_trips_and_leaves_out_equal_committer() {
    let parents = [7u8; 40];
    let fields = CommitFields {
        root: [1; 20],
        height: 3,
        parent_addrs: &parents,
        parent_closure: Some([2; 20]),
        name: "Alice",
        email: "a@example.com",
        description: "msg",
        timestamp_millis: 1_704_067_200_000,
        user_timestamp_millis: 1_704_067_200_000,
        signature: None,
        committer_name: None,
        committer_email: None,
    };
    let bytes = fields.encode().unwrap();
    assert_eq!(&bytes[8..12], FILE_ID_COMMIT);
    let back = CommitFields::decode(&bytes).unwrap();
    assert_eq!(back, fields);
    assert_eq!(back.encode().unwrap(), bytes);
}

#[test]
fn decoders_refuse_other_messages_and_garbage() {
    let tag = TagFields {
        commit_addr: [3; 20],
        name: "t",
        email: "e",
        desc: "d",
        timestamp_millis: 5,
        user_timestamp_millis: 5,
    }
    .encode()
    .unwrap();
    assert!(CommitFields::decode(&tag).is_err());
    assert!(TagFields::decode(&tag[..tag.len() - 1]).is_err());
    for cut in 0..tag.len() {
        let _ = TagFields::decode(&tag[..cut]);
    }
    assert_eq!(TagFields::decode(&tag).unwrap().encode().unwrap(), tag);
}
