// The sign-in's proof of work (src/proof_of_work.rs): given a challenge ISSUED.BITS.RANDOM.MAC,
// finds the first decimal nonce such that SHA-256(challenge ":" nonce) begins with BITS zero
// bits, with WebCrypto, a batch of digests at a time, and posts it back.
const BATCH = 256;

function zeroBits(digest) {
  let bits = 0;
  for (const byte of new Uint8Array(digest)) {
    if (byte !== 0) {
      return bits + Math.clz32(byte) - 24;
    }
    bits += 8;
  }
  return bits;
}

addEventListener("message", async (event) => {
  const challenge = String(event.data);
  const bits = Number(challenge.split(".")[1]);
  const encoder = new TextEncoder();
  for (let start = 0; ; start += BATCH) {
    const tries = [];
    for (let nonce = start; nonce < start + BATCH; nonce++) {
      tries.push(crypto.subtle.digest("SHA-256", encoder.encode(`${challenge}:${nonce}`)));
    }
    const digests = await Promise.all(tries);
    const found = digests.findIndex((digest) => zeroBits(digest) >= bits);
    if (found >= 0) {
      postMessage(String(start + found));
      return;
    }
  }
});
