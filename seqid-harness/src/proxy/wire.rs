//! The MongoDB wire protocol as far as the proxy reads and writes it: whole
//! messages and their headers, the body of an `OP_MSG` or `OP_REPLY`, a
//! request's command name and collection, and the proxy's own replies.

use std::io;
use std::ops::Range;
use std::sync::atomic::{AtomicI32, Ordering};

use mongodb::bson::{Document, RawDocument};
use tokio::io::{AsyncRead, AsyncReadExt};

/// `OP_MSG`, the opcode of every command a current driver sends.
pub(super) const OP_MSG: i32 = 2013;
/// `OP_REPLY`, the server's answer to a legacy `OP_QUERY`: the driver's first
/// handshake (`isMaster`) may still be sent that way.
pub(super) const OP_REPLY: i32 = 1;
/// Where an `OP_REPLY`'s first document starts: the header, `responseFlags`,
/// `cursorID`, `startingFrom` and `numberReturned`.
pub(super) const OP_REPLY_DOCUMENTS: usize = 36;
/// `OP_MSG` flag bit: a CRC-32C checksum follows the sections.
pub(super) const CHECKSUM_PRESENT: u32 = 1 << 0;
/// `OP_MSG` flag bit: the sender sends another message without waiting.
pub(super) const MORE_TO_COME: u32 = 1 << 1;
/// Larger messages are treated as garbage and end the connection (the
/// server's own limit is 48 MB).
const MAX_MESSAGE_LEN: usize = 64 << 20;

/// One whole wire-protocol message, header included.
pub(super) struct Message {
    pub(super) bytes: Vec<u8>,
}

impl Message {
    pub(super) fn i32_at(&self, at: usize) -> i32 {
        i32_at(&self.bytes, at).unwrap_or_default()
    }

    pub(super) fn request_id(&self) -> i32 {
        self.i32_at(4)
    }

    pub(super) fn response_to(&self) -> i32 {
        self.i32_at(8)
    }

    pub(super) fn op_code(&self) -> i32 {
        self.i32_at(12)
    }

    pub(super) fn flags(&self) -> u32 {
        self.i32_at(16) as u32
    }

    /// Whether no reply is expected (an `OP_MSG` flagged `moreToCome`).
    pub(super) fn more_to_come(&self) -> bool {
        self.op_code() == OP_MSG && self.flags() & MORE_TO_COME != 0
    }

    /// Where the body is: the kind-0 section of an `OP_MSG`, or the first
    /// document of an `OP_REPLY`.
    pub(super) fn body_range(&self) -> Option<Range<usize>> {
        let bytes = &self.bytes;
        if self.op_code() == OP_REPLY {
            let at = OP_REPLY_DOCUMENTS;
            let size = usize::try_from(i32_at(bytes, at)?).ok()?;
            let stop = at.checked_add(size)?;
            return (size >= 5 && stop <= bytes.len()).then_some(at..stop);
        }
        if self.op_code() != OP_MSG {
            return None;
        }
        let mut end = bytes.len();
        if self.flags() & CHECKSUM_PRESENT != 0 {
            end = end.checked_sub(4)?;
        }
        let mut at = 20;
        while at < end {
            let kind = bytes[at];
            at += 1;
            // Both kinds start with an int32 size that counts itself.
            let size = usize::try_from(i32_at(bytes, at)?).ok()?;
            let stop = at.checked_add(size)?;
            if size < 4 || stop > end {
                return None;
            }
            match kind {
                0 => return Some(at..stop),
                1 => at += size,
                _ => return None,
            }
        }
        None
    }

    /// The body (kind-0 section) of an `OP_MSG`, or the first document of an
    /// `OP_REPLY`.
    pub(super) fn body(&self) -> Option<&RawDocument> {
        RawDocument::from_bytes(&self.bytes[self.body_range()?]).ok()
    }

    /// The command name and, when it names one, the target collection.
    pub(super) fn command(&self) -> Option<(String, Option<String>)> {
        let body = self.body()?;
        let (name, value) = body.iter().next()?.ok()?;
        let target = match value.as_str() {
            Some(target) => Some(target.to_owned()),
            None if name.eq_ignore_ascii_case("getMore") => {
                body.get_str("collection").ok().map(str::to_owned)
            }
            None => None,
        };
        Some((name.to_owned(), target))
    }
}

fn i32_at(bytes: &[u8], at: usize) -> Option<i32> {
    let four = bytes.get(at..at.checked_add(4)?)?;
    Some(i32::from_le_bytes(four.try_into().ok()?))
}

/// An `OP_MSG` reply from the proxy itself to the request `response_to`:
/// flags 0 and one kind-0 section, as the servers answer.
pub(super) fn op_msg_reply(response_to: i32, body: &Document) -> Vec<u8> {
    /// The proxy's own request ids, apart from the server's (which start low).
    static NEXT_ID: AtomicI32 = AtomicI32::new(1 << 30);
    let body = mongodb::bson::to_vec(body).expect("a BSON document serializes");
    let mut bytes = Vec::with_capacity(21 + body.len());
    bytes.extend_from_slice(&0_i32.to_le_bytes());
    bytes.extend_from_slice(&NEXT_ID.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    bytes.extend_from_slice(&response_to.to_le_bytes());
    bytes.extend_from_slice(&OP_MSG.to_le_bytes());
    bytes.extend_from_slice(&0_u32.to_le_bytes());
    bytes.push(0);
    bytes.extend_from_slice(&body);
    let len = bytes.len() as i32;
    bytes[0..4].copy_from_slice(&len.to_le_bytes());
    bytes
}

/// Reads one whole message; any error (EOF included) ends the connection.
pub(super) async fn read_message<R: AsyncRead + Unpin>(reader: &mut R) -> io::Result<Message> {
    let mut header = [0u8; 16];
    reader.read_exact(&mut header).await?;
    let len = i32::from_le_bytes([header[0], header[1], header[2], header[3]]);
    let len = usize::try_from(len)
        .ok()
        .filter(|len| (16..=MAX_MESSAGE_LEN).contains(len))
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "bad message length"))?;
    let mut bytes = vec![0u8; len];
    bytes[..16].copy_from_slice(&header);
    reader.read_exact(&mut bytes[16..]).await?;
    Ok(Message { bytes })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn op_msg_command_and_target() {
        use mongodb::bson::{doc, to_vec};
        let body = to_vec(&doc! { "insert": "c", "$db": "d" }).unwrap();
        let docs = to_vec(&doc! { "_id": 1 }).unwrap();
        let mut bytes = vec![0u8; 16];
        bytes.extend_from_slice(&0u32.to_le_bytes());
        // A kind-1 section first, to check that sections are walked.
        bytes.push(1);
        let size = 4 + "documents\0".len() + docs.len();
        bytes.extend_from_slice(&(size as i32).to_le_bytes());
        bytes.extend_from_slice(b"documents\0");
        bytes.extend_from_slice(&docs);
        bytes.push(0);
        bytes.extend_from_slice(&body);
        let len = bytes.len() as i32;
        bytes[0..4].copy_from_slice(&len.to_le_bytes());
        bytes[12..16].copy_from_slice(&OP_MSG.to_le_bytes());
        let message = Message { bytes };
        assert_eq!(
            message.command(),
            Some(("insert".to_owned(), Some("c".to_owned())))
        );
        assert!(!message.more_to_come());
    }
}
