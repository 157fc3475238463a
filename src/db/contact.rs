//! Contact-form messages.

use postgres::GenericClient;

pub fn store(
    db: &mut impl GenericClient,
    name: &str,
    email: &str,
    message: &str,
    client_ip: &str,
) -> Result<(), postgres::Error> {
    db.execute(
        "INSERT INTO contact_messages (name, email, message, client_ip) VALUES ($1, $2, $3, $4)",
        &[&name, &email, &message, &client_ip],
    )?;
    Ok(())
}
