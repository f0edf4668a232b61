/* dom.js: small helpers to find and build elements.
 *
 * Elements get their text from i18n keys (setText) or, for untrusted strings, from the
 * caller through textContent; nothing here parses HTML.
 */
import { setText } from './i18n.js';

/** The first element matching `selector` under `root`. */
export const $ = (selector, root = document) => root.querySelector(selector);

/** A new element with classes and, optionally, a translated text. */
export function el(tag, className, key, vars) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (key) setText(node, key, vars);
  return node;
}

/** A new `type=button` button (so it never submits a form), like `el`. */
export function button(className, key, vars) {
  const node = el('button', className, key, vars);
  node.type = 'button';
  return node;
}
