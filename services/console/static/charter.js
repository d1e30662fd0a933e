// The charter editor's re-ranking: a line dragged by its handle (HTML5 drag and drop) or
// moved by its Move up / Move down buttons (the keyboard's way, and a mouse's too). Only the
// order of the lines in the form changes: the form sends them in that order, which is their
// rank. Listeners sit on the document, so a page swapped in by htmx needs no new ones, and
// the script adds them once however often the page is loaded into the same document.
(function () {
  if (window.charterEditor) {
    return;
  }
  window.charterEditor = true;
  var dragged = null;

  function lineOf(node) {
    return node && node.closest ? node.closest("[data-line]") : null;
  }

  function renumbered(line, what) {
    var list = line.parentNode;
    var lines = list.querySelectorAll("[data-line]");
    var place = 0;
    for (var i = 0; i < lines.length; i++) {
      lines[i].querySelector("[data-rank]").textContent = String(i + 1);
      if (lines[i] === line) {
        place = i + 1;
      }
    }
    var said = document.getElementById("moved");
    var id = line.querySelector("input[name=id]").value || "The new line";
    if (said) {
      said.textContent = id + " " + what + ": now line " + place + " of " + lines.length + ".";
    }
  }

  document.addEventListener("dragstart", function (event) {
    var handle = event.target.closest ? event.target.closest(".handle") : null;
    if (!handle) {
      return;
    }
    dragged = lineOf(handle);
    event.dataTransfer.effectAllowed = "move";
    event.dataTransfer.setData("text/plain", "");
    dragged.classList.add("dragging");
  });

  document.addEventListener("dragover", function (event) {
    var over = lineOf(event.target);
    if (dragged && over && over.parentNode === dragged.parentNode) {
      event.preventDefault();
      event.dataTransfer.dropEffect = "move";
    }
  });

  document.addEventListener("drop", function (event) {
    var target = lineOf(event.target);
    if (!dragged || !target || target.parentNode !== dragged.parentNode) {
      return;
    }
    event.preventDefault();
    if (target !== dragged) {
      var list = target.parentNode;
      var lines = Array.prototype.slice.call(list.children);
      var upward = lines.indexOf(dragged) > lines.indexOf(target);
      list.insertBefore(dragged, upward ? target : target.nextSibling);
      renumbered(dragged, "moved");
    }
  });

  document.addEventListener("dragend", function () {
    if (dragged) {
      dragged.classList.remove("dragging");
    }
    dragged = null;
  });

  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest("button[data-move]") : null;
    if (!button) {
      return;
    }
    event.preventDefault();
    var line = lineOf(button);
    var list = line.parentNode;
    if (button.dataset.move === "up" && line.previousElementSibling) {
      list.insertBefore(line, line.previousElementSibling);
      renumbered(line, "moved up");
    } else if (button.dataset.move === "down" && line.nextElementSibling) {
      list.insertBefore(line.nextElementSibling, line);
      renumbered(line, "moved down");
    }
    button.focus();
  });
})();
