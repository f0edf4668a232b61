/* code-copy.js: a copy button on every code block of a finished answer or a question.
 *
 * The code is copied from the element's textContent, so nothing is re-parsed as HTML.
 */
import { button, el } from './dom.js';
import { setAttrText, setText } from './i18n.js';

/** Wrap each `pre > code` under `container` in a block that has a copy button. */
export function addCopyButtons(container) {
  for (const code of container.querySelectorAll('pre > code')) {
    const pre = code.parentElement;
    // A wrapper, so the button stays put while a long line scrolls sideways.
    const wrap = el('div', 'code-block');
    pre.replaceWith(wrap);
    // Named by its visible text ("Copy", then "Copied"); the title says what it copies.
    const copy = button('code-copy', 'copy');
    setAttrText(copy, 'title', 'copyLabel');
    // A long line scrolls the block sideways: keyboard users must be able to scroll it too.
    pre.tabIndex = 0;
    copy.addEventListener('click', () => copyText(copy, code.textContent || ''));
    wrap.append(copy, pre);
  }
}

async function copyText(btn, text) {
  let ok = false;
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      ok = true;
    }
  } catch { /* denied: try the old way */ }
  if (!ok) ok = legacyCopy(text);
  setText(btn, ok ? 'copied' : 'copyFailed');
  btn.classList.toggle('done', ok);
  setTimeout(() => {
    setText(btn, 'copy');
    btn.classList.remove('done');
  }, 2000);
}

function legacyCopy(text) {
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.className = 'offscreen';
  document.body.append(area);
  area.select();
  let ok = false;
  try { ok = document.execCommand('copy'); } catch { ok = false; }
  area.remove();
  return ok;
}
