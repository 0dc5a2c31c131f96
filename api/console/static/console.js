// cartonize console: small progressive enhancements; every page works without them.
"use strict";

// Copy buttons: <button data-copy="#selector">.
document.querySelectorAll("[data-copy]").forEach((button) => {
  button.addEventListener("click", async () => {
    const source = document.querySelector(button.dataset.copy);
    if (!source) return;
    try {
      await navigator.clipboard.writeText(source.textContent.trim());
    } catch (err) {
      const range = document.createRange();
      range.selectNodeContents(source);
      const sel = window.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
      document.execCommand("copy");
    }
    const note = button.parentElement.querySelector("[data-copied]");
    if (note) note.hidden = false;
  });
});

// Inline checks of the JSON fields while typing (the server checks again on save).
const ALLOWED_VARIABLES = new Set(["api_key", "api_token"]);
function checkJson(area) {
  const text = area.value.trim();
  const error = document.getElementById("e-" + area.name);
  let message = "";
  if (text) {
    let value;
    try {
      value = JSON.parse(text);
    } catch (err) {
      message = "Not valid JSON: " + err.message;
    }
    if (!message && (typeof value !== "object" || value === null || Array.isArray(value))) {
      message = "Must be a JSON object.";
    }
    if (!message) {
      for (const [name, v] of Object.entries(value)) {
        if (typeof v !== "string") { message = `${name}: the value must be a string.`; break; }
        if (area.dataset.json === "headers") {
          if (/[\r\n]/.test(name + v)) { message = `${name}: CR and LF are not allowed in headers.`; break; }
          const bad = [...v.matchAll(/\{\{\s*([^}]*?)\s*\}\}/g)].map((m) => m[1]).find((n) => !ALLOWED_VARIABLES.has(n));
          if (bad !== undefined) { message = `${name}: only {{ api_key }} and {{ api_token }} may be used (found {{ ${bad} }}).`; break; }
        }
      }
    }
  }
  if (error) {
    error.textContent = message;
    error.hidden = !message;
  }
  area.setAttribute("aria-invalid", message ? "true" : "false");
}
document.querySelectorAll("textarea[data-json]").forEach((area) => {
  area.addEventListener("input", () => checkJson(area));
});

// A pull still running: poll its status and show the progress, then reload for the log.
const progress = document.querySelector("[data-run-status]");
if (progress) {
  const poll = async () => {
    const reply = await fetch(progress.dataset.runStatus, { credentials: "same-origin" });
    if (!reply.ok) { progress.textContent = "Could not read the run's status."; return; }
    const run = await reply.json();
    progress.textContent = `Run ${run.run_id}: ${run.status}`;
    if (run.status === "queued" || run.status === "running") {
      setTimeout(poll, 1000);
    } else if (progress.dataset.done) {
      window.location.assign(progress.dataset.done);
    }
  };
  setTimeout(poll, 1000);
}
