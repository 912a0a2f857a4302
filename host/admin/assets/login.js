// The login form: posts the token as JSON (the host reads JSON bodies
// only) and, when the host sets the login cookie, opens the dashboard.
"use strict";
document.getElementById("login").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const out = document.getElementById("login-error");
  const token = document.getElementById("token").value;
  out.textContent = "";
  try {
    const r = await fetch("/admin/login", {
      method: "POST",
      headers: { "content-type": "application/json" },
      credentials: "same-origin",
      body: JSON.stringify({ token }),
    });
    if (r.ok) {
      window.location.assign("/admin");
      return;
    }
    const body = await r.json().catch(() => ({}));
    out.textContent = body.error || "Sign-in failed (" + r.status + ")";
  } catch (e) {
    out.textContent = "The host did not answer: " + e;
  }
  document.getElementById("token").focus();
});
