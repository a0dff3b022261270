// On a phone the navigation folds into a menu: the button opens and closes it. Without this
// script the menu stays open (app.css folds it only under html.js).
document.documentElement.classList.add("js");
document.addEventListener("DOMContentLoaded", () => {
  const button = document.querySelector(".menu-toggle");
  const menu = document.getElementById("site-menu");
  if (!button || !menu) return;
  button.addEventListener("click", () => {
    const open = button.getAttribute("aria-expanded") !== "true";
    button.setAttribute("aria-expanded", String(open));
    menu.classList.toggle("open", open);
  });
});
