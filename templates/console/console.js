// The "Copy" buttons beside a secret the console shows once (a token, a key, an invitation
// link). They are hidden in the page and shown here, so that without script the secret is only
// what it always is: plain text to select and copy.
for (const button of document.querySelectorAll("button[data-copy]")) {
  const secret = document.getElementById(button.dataset.copy);
  button.hidden = false;
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(secret.textContent.trim());
      button.textContent = "Copied";
    } catch {
      window.getSelection().selectAllChildren(secret);
      button.textContent = "Selected: press Ctrl+C";
    }
  });
}
