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

/**
 * An icon drawn from one SVG path, inline (no icon font or image request under the CSP);
 * decorative: the button it sits in carries the accessible name.
 */
export function icon(d, transform) {
  const NS = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(NS, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('class', 'icon');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('focusable', 'false');
  const path = document.createElementNS(NS, 'path');
  path.setAttribute('d', d);
  if (transform) path.setAttribute('transform', transform);
  svg.append(path);
  return svg;
}
