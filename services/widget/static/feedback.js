// The Feedback Loop widget: one ES module, no build step (docs/widget.md, decisions D236–D238).
//
//   import { mount } from "https://feedback.example.org/widget/feedback.js";
//   mount(document.getElementById("feedback"), { token, subjectRef: "run-42" });
//
// It works under a strict Content-Security-Policy: no inline script, no inline style, no
// innerHTML: the DOM is built node by node in a shadow root and styled by a constructed
// stylesheet. It is keyboard operable (native radio buttons, checkbox, textarea, button),
// every control has a label, and what happens is announced in a live region.

const SERVICE = new URL(".", import.meta.url).origin;
const MAX_COMMENT = 2000;

const STYLE = `
:host { display: block; font: inherit; color: inherit; }
form { border: 1px solid #767676; border-radius: 6px; padding: 0.75rem 1rem; max-width: 32rem; }
fieldset { border: 0; margin: 0 0 0.75rem; padding: 0; }
legend { font-weight: 600; margin-bottom: 0.25rem; }
.stars { display: flex; gap: 0.25rem; }
.star input { position: absolute; opacity: 0; width: 1px; height: 1px; }
.star span[aria-hidden] { font-size: 1.75rem; line-height: 1; color: #595959; cursor: pointer; }
.star input:checked + span[aria-hidden], .star.lit span[aria-hidden] { color: #8a5a00; }
.star input:focus-visible + span[aria-hidden] { outline: 3px solid #1a5fb4; outline-offset: 2px; }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
label.block { display: block; margin: 0.5rem 0 0.25rem; }
textarea { width: 100%; box-sizing: border-box; min-height: 4rem; font: inherit; }
.check { display: flex; align-items: center; gap: 0.5rem; margin: 0.5rem 0; }
button { font: inherit; padding: 0.4rem 1rem; border-radius: 4px; border: 1px solid #1a5fb4; background: #1a5fb4; color: #fff; cursor: pointer; }
button:focus-visible { outline: 3px solid #8a5a00; outline-offset: 2px; }
button[disabled] { opacity: 0.6; cursor: default; }
.status { min-height: 1.5em; margin: 0.5rem 0 0; }
.status.failed { color: #a51d2d; }
.status.done { color: #26662a; }
`;

const TEXT = {
  legend: "How good was this answer?",
  star: (n) => `${n} of 5 stars`,
  comment: "Comment (optional)",
  wrong: "The answer was wrong: report it",
  send: "Send feedback",
  sending: "Sending…",
  chooseRating: "Choose a rating first.",
  needComment: "Say in the comment what was wrong.",
  thanks: "Thank you: your feedback was recorded.",
  reported: "Thank you: your feedback was recorded and the wrong answer reported.",
  expired: "This feedback form has expired. Reload the page to send feedback.",
  refused: (field) => `The feedback was not accepted${field ? ` (${field})` : ""}.`,
  failed: "The feedback could not be sent. Try again later.",
};

let sheet = null;
function stylesheet() {
  if (sheet === null) {
    sheet = new CSSStyleSheet();
    sheet.replaceSync(STYLE);
  }
  return sheet;
}

function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === true) node.setAttribute(name, "");
    else if (value !== false && value != null) node.setAttribute(name, String(value));
  }
  node.append(...children);
  return node;
}

/**
 * Mount the widget in `host`.
 *
 * options:
 *   token          the widget token the embedding site's backend minted (required)
 *   subjectRef     the rated answer's id, e.g. the run's (required)
 *   subjectKind    "run" (default), "attempt", "artifact", "memory" or "evaluation"
 *   thread, messageRef, modelName   where the answer is: with all three, the user may
 *                  report a wrong answer
 *   service        the service's origin (default: where this module was loaded from)
 *   onTokenExpired called when the service refuses the token (401): mint a new one and
 *                  call `widget.setToken(token)`
 *   onRecorded     called with the service's answer once the feedback is recorded
 *
 * Returns { setToken(token), destroy() }.
 */
export function mount(host, options) {
  if (!host || !options || !options.token || !options.subjectRef) {
    throw new TypeError("mount(host, { token, subjectRef, ... }) needs a host, a token and a subjectRef");
  }
  let token = options.token;
  const service = options.service || SERVICE;
  const root = host.shadowRoot || host.attachShadow({ mode: "open" });
  root.adoptedStyleSheets = [stylesheet()];
  root.replaceChildren();

  const stars = [1, 2, 3, 4, 5].map((n) =>
    element(
      "label",
      { class: "star" },
      element("input", { type: "radio", name: "rating", value: n }),
      element("span", { "aria-hidden": "true" }, "★"),
      element("span", { class: "sr" }, TEXT.star(n)),
    ),
  );
  const radios = stars.map((label) => label.querySelector("input"));
  const light = () => {
    const chosen = radios.findIndex((radio) => radio.checked);
    stars.forEach((label, index) => label.classList.toggle("lit", index <= chosen));
  };
  radios.forEach((radio) => radio.addEventListener("change", light));

  const comment = element("textarea", { id: "fl-comment", name: "comment", maxlength: MAX_COMMENT });
  const canReport = Boolean(options.thread && options.messageRef && options.modelName);
  const wrong = element("input", { type: "checkbox", id: "fl-wrong", name: "wrong" });
  const button = element("button", { type: "submit" }, TEXT.send);
  const status = element("p", { class: "status", role: "status", "aria-live": "polite" });

  const form = element(
    "form",
    { "aria-label": "Feedback on this answer", novalidate: true },
    element(
      "fieldset",
      {},
      element("legend", {}, TEXT.legend),
      element("div", { class: "stars" }, ...stars),
    ),
    element("label", { class: "block", for: "fl-comment" }, TEXT.comment),
    comment,
    ...(canReport
      ? [element("div", { class: "check" }, wrong, element("label", { for: "fl-wrong" }, TEXT.wrong))]
      : []),
    button,
    status,
  );
  root.append(form);

  const say = (text, kind = "") => {
    status.className = `status ${kind}`.trim();
    status.textContent = text;
  };

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const chosen = radios.find((radio) => radio.checked);
    if (!chosen) {
      say(TEXT.chooseRating, "failed");
      radios[0].focus();
      return;
    }
    const text = comment.value.trim();
    const reporting = canReport && wrong.checked;
    if (reporting && !text) {
      say(TEXT.needComment, "failed");
      comment.focus();
      return;
    }
    const body = { subjectRef: options.subjectRef, rating: Number(chosen.value) };
    if (options.subjectKind) body.subjectKind = options.subjectKind;
    if (text) body.comment = text;
    if (reporting) {
      body.wrongAnswer = {
        thread: options.thread,
        messageRef: options.messageRef,
        modelName: options.modelName,
      };
    }
    button.disabled = true;
    say(TEXT.sending);
    try {
      const answer = await fetch(`${service}/factory/widget/feedback`, {
        method: "POST",
        mode: "cors",
        credentials: "omit",
        headers: {
          Authorization: `Bearer ${token}`,
          "Content-Type": "application/json",
          "Idempotency-Key": crypto.randomUUID(),
        },
        body: JSON.stringify(body),
      });
      if (answer.status === 201) {
        const recorded = await answer.json();
        say(reporting ? TEXT.reported : TEXT.thanks, "done");
        form.dataset.recorded = recorded.feedbackId;
        if (options.onRecorded) options.onRecorded(recorded);
        return;
      }
      if (answer.status === 401) {
        say(TEXT.expired, "failed");
        if (options.onTokenExpired) options.onTokenExpired();
        return;
      }
      const problem = await answer.json().catch(() => ({}));
      say(answer.status < 500 ? TEXT.refused(problem.field) : TEXT.failed, "failed");
    } catch {
      say(TEXT.failed, "failed");
    } finally {
      button.disabled = false;
    }
  });

  return {
    setToken(fresh) {
      token = fresh;
    },
    destroy() {
      root.replaceChildren();
    },
  };
}
