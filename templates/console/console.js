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

// The live check of "Connect an edge": its fragment fetched again every 3 s while the page is
// shown, and replaced only when it changed (a screen reader hears the new request once).
const live = document.querySelector("[data-live]");
if (live) {
  setInterval(async () => {
    if (document.hidden) return;
    try {
      const answer = await fetch(live.dataset.live, { credentials: "same-origin" });
      if (!answer.ok) return;
      const html = (await answer.text()).trim();
      if (html !== live.innerHTML.trim()) live.innerHTML = html;
    } catch {
      // The next turn tries again.
    }
  }, 3000);
}

// The sign-in's proof of work, asked during a flood of sign-ins from new browsers: a Web Worker
// (/proof-worker.js) finds the nonce while the person types; a sign-in sent before it is found
// goes once it is. Without script, the page says to wait and sign in again later.
const proofForm = document.querySelector("form[data-challenge]");
if (proofForm) {
  const status = document.getElementById("proof-status");
  const nonce = proofForm.elements.proof;
  const solved = new Promise((resolve, reject) => {
    const worker = new Worker("/proof-worker.js");
    worker.addEventListener("message", (event) => resolve(event.data));
    worker.addEventListener("error", reject);
    worker.postMessage(proofForm.dataset.challenge);
  });
  status.textContent = "Many sign-ins are coming from browsers new to their person at this " +
    "moment, so this browser is doing a few seconds of work first. Type your password and " +
    "press Sign in meanwhile: it signs in as soon as the work is done.";
  solved.then((found) => {
    nonce.value = found;
    status.textContent = "This browser's work is done: you can sign in.";
  }, () => {
    status.textContent = "This browser could not do the work: wait a few minutes, then sign in again.";
  });
  proofForm.addEventListener("submit", (event) => {
    if (nonce.value) {
      return;
    }
    event.preventDefault();
    status.textContent = "Signing in as soon as this browser's work is done…";
    solved.then(() => proofForm.submit());
  });
}

// ---- Passkeys (WebAuthn) ------------------------------------------------------------------
// A button `data-passkey="create"` (register) or `"get"` (sign in) asks the console for a
// ceremony's options (`data-options`, posted with its form's token if the form has one), which
// come as WebAuthn's JSON (`publicKey`) with the ceremony the server sealed (`ceremony`); the
// browser's answer goes back, as JSON, in the hidden `credential` of the form `data-form`, the
// ceremony in its hidden `ceremony`, and the form is sent as any form. Without WebAuthn the
// button stays hidden.
const passkeys = window.PublicKeyCredential
  && PublicKeyCredential.parseCreationOptionsFromJSON
  && PublicKeyCredential.parseRequestOptionsFromJSON;
for (const button of document.querySelectorAll("button[data-passkey]")) {
  if (!passkeys) continue;
  const form = document.getElementById(button.dataset.form);
  const status = document.getElementById(button.dataset.status);
  button.hidden = false;
  button.addEventListener("click", async () => {
    status.textContent = "";
    try {
      const body = new URLSearchParams();
      const token = form.elements.namedItem("csrf");
      if (token) body.set("csrf", token.value);
      const answer = await fetch(button.dataset.options, { method: "POST", body });
      if (!answer.ok) throw new Error(`the console answered ${answer.status}`);
      const { publicKey, ceremony } = await answer.json();
      const credential = button.dataset.passkey === "create"
        ? await navigator.credentials.create({
          publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(publicKey),
        })
        : await navigator.credentials.get({
          publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(publicKey),
        });
      form.elements.namedItem("credential").value = JSON.stringify(credential.toJSON());
      form.elements.namedItem("ceremony").value = ceremony;
      form.submit();
    } catch (error) {
      status.textContent = `No passkey was used: ${error.message}`;
    }
  });
}
