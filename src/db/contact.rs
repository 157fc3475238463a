//! Contact-form messages.

use crate::contact::ContactMessage;
use postgres::GenericClient;

pub fn store(
    db: &mut impl GenericClient,
    message: &ContactMessage,
    client_ip: &str,
) -> Result<(), postgres::Error> {
    db.execute(
        "INSERT INTO contact_messages (name, email, message, client_ip) VALUES ($1, $2, $3, $4)",
        &[&message.name, &message.email, &message.message, &client_ip],
    )?;
    Ok(())
}
