// The sizing form shows the knobs the chosen task uses: serving's for inference, training's
// for the fine-tuning and pre-training tasks. Without this script both groups stay visible.
(() => {
  const show = (form) => {
    const task = form.querySelector("select[name=task]");
    if (!task) return;
    const serving = task.value === "inference";
    const servingGroup = form.querySelector(".serving-group");
    const trainingGroup = form.querySelector(".training-group");
    if (servingGroup) servingGroup.hidden = !serving;
    if (trainingGroup) trainingGroup.hidden = serving;
  };
  const showAll = () => document.querySelectorAll("form.sizing-form").forEach(show);
  document.addEventListener("DOMContentLoaded", showAll);
  // htmx swaps a fresh form in after an answer.
  document.addEventListener("htmx:afterSettle", showAll);
  document.addEventListener("change", (event) => {
    if (event.target.matches("form.sizing-form select[name=task]")) show(event.target.form);
  });
})();
