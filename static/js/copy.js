// A button with data-copy="<selector>" copies that element's text to the clipboard and says so.
document.addEventListener("DOMContentLoaded", () => {
  for (const button of document.querySelectorAll("button[data-copy]")) {
    button.addEventListener("click", async () => {
      const source = document.querySelector(button.dataset.copy);
      if (!source) return;
      const label = button.textContent;
      try {
        await navigator.clipboard.writeText(source.textContent.trim());
        button.textContent = "Copied";
      } catch {
        button.textContent = "Select and copy by hand";
      }
      setTimeout(() => { button.textContent = label; }, 2000);
    });
  }
});
