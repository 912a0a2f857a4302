//! A conversation as a reader assembles it from opened inners (spec §4.10
//! rule 5): messages by client id (`c`); an edit (`e`) or delete (`z`)
//! applies only when it comes from the sender of the message it names;
//! reactions (`x`) add, and `u: 1` undoes one; a disappearing message (`d`)
//! is hidden once its time to live has passed; a reply (`r`) points at
//! what it answers.
//!
//! Who sent an inner is the caller's call: the address its `sig` recovers
//! to when it has one ([`crate::signature::verify`]), else the
//! self-declared `f`, which proves nothing. The server has no part in any
//! of it: there is no delivered or read state.

use std::collections::{BTreeMap, BTreeSet};

use crate::inner::Inner;

/// One message of a thread, with what later inners did to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// The client id.
    pub id: String,
    /// Who sent it.
    pub from: String,
    /// Its text (the latest edit's).
    pub text: String,
    /// When it was received, ms.
    pub received_ms: u64,
    /// Edited by its sender.
    pub edited: bool,
    /// Deleted by its sender (the text is gone).
    pub deleted: bool,
    /// Reactions: each reaction and who reacted with it.
    pub reactions: BTreeMap<String, BTreeSet<String>>,
    /// When it disappears, ms (`d`).
    pub expires_ms: Option<u64>,
    /// The client id it replies to.
    pub reply_to: Option<String>,
}

/// What applying an inner did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Applied {
    /// A new message.
    Added,
    /// An edit, a delete or a reaction applied to an earlier message.
    Changed,
    /// Ignored: an edit or delete by someone who is not the sender, a
    /// reference to an unknown message, a repeated client id, or an inner
    /// without a client id.
    Ignored,
}

/// A conversation's messages in the order received.
#[derive(Clone, Debug, Default)]
pub struct Thread {
    messages: BTreeMap<String, Message>,
    order: Vec<String>,
}

impl Thread {
    /// Applies `inner`, sent by `from`, received at `received_ms`.
    pub fn apply(&mut self, from: &str, inner: &Inner, received_ms: u64) -> Applied {
        let meta = &inner.meta;
        if let Some(edit) = &meta.e {
            return self.by_sender(from, &edit.c, |m| {
                m.text = edit.t.clone();
                m.edited = true;
            });
        }
        if let Some(delete) = &meta.z {
            return self.by_sender(from, &delete.c, |m| {
                m.text.clear();
                m.deleted = true;
            });
        }
        if let Some(reaction) = &meta.x {
            let Some(m) = self.messages.get_mut(&reaction.c) else {
                return Applied::Ignored;
            };
            let who = m.reactions.entry(reaction.e.clone()).or_default();
            if reaction.u == Some(1) {
                who.remove(from);
            } else {
                who.insert(from.to_string());
            }
            m.reactions.retain(|_, who| !who.is_empty());
            return Applied::Changed;
        }
        let Some(id) = meta.c.clone() else {
            return Applied::Ignored;
        };
        if self.messages.contains_key(&id) {
            return Applied::Ignored;
        }
        self.order.push(id.clone());
        self.messages.insert(
            id.clone(),
            Message {
                id,
                from: from.to_string(),
                text: inner.text.clone(),
                received_ms,
                edited: false,
                deleted: false,
                reactions: BTreeMap::new(),
                expires_ms: meta.d.map(|ttl| received_ms.saturating_add(ttl)),
                reply_to: meta.r.as_ref().and_then(|r| r.c.clone()),
            },
        );
        Applied::Added
    }

    fn by_sender(&mut self, from: &str, id: &str, change: impl FnOnce(&mut Message)) -> Applied {
        match self.messages.get_mut(id) {
            Some(m) if m.from == from && !m.deleted => {
                change(m);
                Applied::Changed
            }
            _ => Applied::Ignored,
        }
    }

    /// The messages to show at `now_ms`: in order, disappeared ones left out.
    pub fn visible(&self, now_ms: u64) -> Vec<&Message> {
        self.order
            .iter()
            .filter_map(|id| self.messages.get(id))
            .filter(|m| m.expires_ms.is_none_or(|t| now_ms < t))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inner::{Delete, Edit, Meta, Reaction, Reply};

    fn with(meta: Meta, text: &str) -> Inner {
        Inner {
            meta,
            text: text.into(),
        }
    }

    fn id(c: &str) -> Meta {
        Meta {
            c: Some(c.into()),
            ..Meta::default()
        }
    }

    #[test]
    fn only_the_sender_edits_or_deletes_and_reactions_undo() {
        let mut t = Thread::default();
        assert_eq!(
            t.apply("alice", &with(id("aaaaaaaa"), "hi"), 1),
            Applied::Added
        );
        let edit = |c: &str| Meta {
            e: Some(Edit {
                c: c.into(),
                t: "hello".into(),
            }),
            ..Meta::default()
        };
        assert_eq!(
            t.apply("mallory", &with(edit("aaaaaaaa"), ""), 2),
            Applied::Ignored
        );
        assert_eq!(t.visible(3)[0].text, "hi");
        assert_eq!(
            t.apply("alice", &with(edit("aaaaaaaa"), ""), 2),
            Applied::Changed
        );
        assert_eq!(t.visible(3)[0].text, "hello");
        assert!(t.visible(3)[0].edited);

        let react = |u| Meta {
            x: Some(Reaction {
                c: "aaaaaaaa".into(),
                e: "👍".into(),
                u,
            }),
            ..Meta::default()
        };
        t.apply("bob", &with(react(None), ""), 4);
        t.apply("carol", &with(react(None), ""), 4);
        t.apply("bob", &with(react(Some(1)), ""), 5);
        let who: Vec<_> = t.visible(6)[0].reactions["👍"].iter().cloned().collect();
        assert_eq!(who, ["carol"]);

        let delete = Meta {
            z: Some(Delete {
                c: "aaaaaaaa".into(),
            }),
            ..Meta::default()
        };
        assert_eq!(
            t.apply("bob", &with(delete.clone(), ""), 7),
            Applied::Ignored
        );
        assert_eq!(t.apply("alice", &with(delete, ""), 7), Applied::Changed);
        let m = t.visible(8)[0];
        assert!(m.deleted && m.text.is_empty());
        assert_eq!(
            t.apply("alice", &with(edit("aaaaaaaa"), ""), 9),
            Applied::Ignored
        );
    }

    #[test]
    fn disappearing_messages_hide_and_replies_point_back() {
        let mut t = Thread::default();
        let brief = Meta {
            d: Some(1_000),
            ..id("bbbbbbbb")
        };
        t.apply("alice", &with(brief, "soon gone"), 10_000);
        let reply = Meta {
            r: Some(Reply {
                t: "soon gone".into(),
                w: "alice".into(),
                c: Some("bbbbbbbb".into()),
            }),
            ..id("cccccccc")
        };
        t.apply("bob", &with(reply, "seen"), 10_500);
        assert_eq!(t.visible(10_999).len(), 2);
        let left = t.visible(11_000);
        assert_eq!(left.len(), 1);
        assert_eq!(left[0].reply_to.as_deref(), Some("bbbbbbbb"));
        assert_eq!(
            t.apply("bob", &with(id("cccccccc"), "again"), 1),
            Applied::Ignored
        );
        assert_eq!(
            t.apply("bob", &with(Meta::default(), "no id"), 1),
            Applied::Ignored
        );
    }
}
