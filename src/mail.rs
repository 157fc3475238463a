//! Optional mail (`AGENTCARD_SMTP_URL`): invitation and password links are also sent to the
//! person they are for, and the scheduled reports to their subscribers (a [`ListMail`]: plain
//! text and HTML, with RFC 8058's one-click unsubscribe). A mail is queued and the request answered at once; a thread of ours
//! sends the queue through lettre's blocking SMTP client, each exchange under a time-out, so a
//! slow or absent mail server never holds a request. A failure is logged with the recipient and
//! the cause, never the link. When the handle drops, what is queued is still sent (the CLI
//! exits right after queueing), each under the same time-out.

use crate::background::{Background, Stop};
use crate::config::Config;
use crossbeam::channel::{self, Receiver, Sender, TrySendError};
use lettre::message::header::{ContentType, HeaderName, HeaderValue};
use lettre::message::{Mailbox, Message, MultiPart};
use lettre::Address;
use lettre::{SmtpTransport, Transport};
use std::time::Duration;

/// Each SMTP exchange (connect, each command) gives up after this.
const TIMEOUT: Duration = Duration::from_secs(10);
/// Mails waiting for the sender; more are dropped (and logged) rather than held in memory.
const QUEUE: usize = 64;
/// How long the scheduled work waits for room in the queue before it drops a list's mail.
const LIST_WAIT: Duration = Duration::from_secs(60);

const LIST_UNSUBSCRIBE: HeaderName = HeaderName::new_from_ascii_str("List-Unsubscribe");
const LIST_UNSUBSCRIBE_POST: HeaderName = HeaderName::new_from_ascii_str("List-Unsubscribe-Post");

/// A mail to send: its recipient, subject and plain text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mail {
    pub to: String,
    pub subject: String,
    pub body: String,
}

/// A mail of a list the person subscribed to (a scheduled report): the plain mail, the same
/// in HTML (sent as `multipart/alternative`), and the URL that ends the subscription in one
/// click, given as `List-Unsubscribe` with `List-Unsubscribe-Post: List-Unsubscribe=One-Click`
/// (RFC 8058): a mail client `POST`s `List-Unsubscribe=One-Click` to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListMail {
    pub mail: Mail,
    pub html: String,
    pub unsubscribe: String,
}

/// What the queue holds.
enum Outgoing {
    Plain(Mail),
    List(ListMail),
}

impl Outgoing {
    fn to(&self) -> &str {
        match self {
            Outgoing::Plain(mail) | Outgoing::List(ListMail { mail, .. }) => &mail.to,
        }
    }
}

impl Mail {
    /// An invitation to join `org` as `role`, with its link.
    pub fn invitation(to: &str, org: &str, role: &str, link: &str) -> Mail {
        Mail {
            to: to.into(),
            subject: format!("You are invited to {org} on agentcard"),
            body: format!(
                "You are invited to join {org} as {role} in the agentcard console.\n\n\
                 Open this link within 7 days to accept (it works once):\n{link}\n\n\
                 If you did not expect this invitation, ignore this mail.\n"
            ),
        }
    }

    /// A link with which the person sets a (new) password.
    pub fn password(to: &str, link: &str) -> Mail {
        Mail {
            to: to.into(),
            subject: "Set your agentcard password".into(),
            body: format!(
                "Open this link within 7 days to set your password for the agentcard console \
                 (it works once):\n{link}\n\n\
                 If you did not ask for it, ignore this mail: your password stays as it is.\n"
            ),
        }
    }
}

/// The queue of mails and the thread that sends them.
pub struct Mailer {
    queue: Sender<Outgoing>,
    _sender: Background,
}

impl Mailer {
    /// The sender of `AGENTCARD_SMTP_URL`, if set; mails come from `noreply@` the console
    /// host. A URL the mail client refuses (the configuration checked its form already) is
    /// logged, and the service runs without mail, as when it is unset.
    pub fn configured(config: &Config) -> Option<Mailer> {
        let url = config.smtp_url.as_ref()?;
        let transport = match SmtpTransport::from_url(url.as_str()) {
            Ok(builder) => builder.timeout(Some(TIMEOUT)).build(),
            Err(error) => {
                log::error!("AGENTCARD_SMTP_URL refused by the mail client, no mail sent: {error}");
                return None;
            }
        };
        let host = config.console_host.as_deref().unwrap_or("localhost");
        let address = Address::new("noreply", host)
            .unwrap_or_else(|_| Address::new("noreply", "localhost").expect("a valid address"));
        let from = Mailbox::new(Some("agentcard".into()), address);
        let (queue, queued) = channel::bounded(QUEUE);
        let sender = Background::spawn("mailer", move |stop| {
            send_all(&transport, &from, &queued, &stop);
        });
        Some(Mailer {
            queue,
            _sender: sender,
        })
    }

    /// Queues `mail` and returns at once; a full queue drops it, with a log line.
    pub fn send(&self, mail: Mail) {
        if let Err(TrySendError::Full(mail) | TrySendError::Disconnected(mail)) =
            self.queue.try_send(Outgoing::Plain(mail))
        {
            log::warn!("mail to {} dropped: the mail queue is full", mail.to());
        }
    }

    /// Queues a list's `mail`, waiting for room up to [`LIST_WAIT`] (on the scheduled work's
    /// thread, never a request's); a queue still full drops it, with a log line.
    pub fn send_list(&self, mail: ListMail) {
        if let Err(refused) = self.queue.send_timeout(Outgoing::List(mail), LIST_WAIT) {
            log::warn!(
                "mail to {} dropped: the mail queue is full",
                refused.into_inner().to()
            );
        }
    }
}

/// Sends each mail as it comes; once the stop has come, what is left in the queue.
fn send_all(transport: &SmtpTransport, from: &Mailbox, queued: &Receiver<Outgoing>, stop: &Stop) {
    while let Some(mail) = stop.next(queued) {
        send_one(transport, from, &mail);
    }
    for mail in queued.try_iter() {
        send_one(transport, from, &mail);
    }
}

fn send_one(transport: &SmtpTransport, from: &Mailbox, mail: &Outgoing) {
    let sent = message(from, mail).and_then(|message| {
        transport
            .send(&message)
            .map(drop)
            .map_err(|e| e.to_string())
    });
    if let Err(cause) = sent {
        log::warn!("mail to {} not sent: {cause}", mail.to());
    }
}

fn message(from: &Mailbox, outgoing: &Outgoing) -> Result<Message, String> {
    let to: Mailbox = outgoing
        .to()
        .parse()
        .map_err(|e| format!("recipient: {e}"))?;
    let builder = Message::builder().from(from.clone()).to(to);
    let made = match outgoing {
        Outgoing::Plain(mail) => builder
            .subject(&mail.subject)
            .header(ContentType::TEXT_PLAIN)
            .body(mail.body.clone()),
        Outgoing::List(list) => builder
            .subject(&list.mail.subject)
            .raw_header(HeaderValue::new(
                LIST_UNSUBSCRIBE,
                format!("<{}>", list.unsubscribe),
            ))
            .raw_header(HeaderValue::new(
                LIST_UNSUBSCRIBE_POST,
                "List-Unsubscribe=One-Click".into(),
            ))
            .multipart(MultiPart::alternative_plain_html(
                list.mail.body.clone(),
                list.html.clone(),
            )),
    };
    made.map_err(|e| e.to_string())
}
