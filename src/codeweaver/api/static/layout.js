/* layout.js: the conversation list as a slide-in panel on narrow screens. */
import { $ } from './dom.js';

function setSidebar(open) {
  document.body.classList.toggle('sidebar-open', open);
  $('#sidebar-toggle').setAttribute('aria-expanded', open ? 'true' : 'false');
}

export function toggleSidebar() {
  setSidebar(!document.body.classList.contains('sidebar-open'));
}

/** Close the panel (after a choice in it, or Escape); a no-op when it is not open. */
export function closeSidebarOnPhone() {
  if (document.body.classList.contains('sidebar-open')) setSidebar(false);
}
