// apl ui: follows a run live (server-sent events), restyles its graph's
// nodes by state, and shows a step's details beside the graph. No
// framework: the page is server-rendered, this only updates it.
"use strict";

(function () {
  const run = document.getElementById("run");
  if (!run) return;
  const id = run.dataset.run;
  const graph = document.getElementById("graph");
  const detail = document.getElementById("detail");
  let selected = null;

  function text(tag, s, cls) {
    const el = document.createElement(tag);
    el.textContent = s == null ? "" : String(s);
    if (cls) el.className = cls;
    return el;
  }

  // The line the server's drawing keeps in each step's node for how
  // often the run ran it: a no-break space until the run reaches it.
  const badgeRoom = "\u00a0";

  // badgeText is the text of a step node's badge line, found once.
  function badgeText(g) {
    let t = g.querySelector("text[data-badge]");
    if (t) return t;
    t = Array.prototype.find.call(g.querySelectorAll("text"), function (x) { return x.textContent === badgeRoom; });
    if (!t) return null;
    t.dataset.badge = "";
    // Graphviz placed the empty line's start at its middle: longer text
    // is centred there.
    t.setAttribute("text-anchor", "middle");
    return t;
  }

  // paint marks the run on the graph, which the server drew once with
  // nothing reached: each step node gets the class of its state and its
  // badge line how often it ran ("completed ×2"), each end the run
  // reached "reached", each edge it took "taken" and its label how
  // often, and the title the run's status. Nothing is drawn again as the
  // run goes on.
  function paint(nodes, edges, title, badges) {
    edges = edges || {};
    badges = badges || {};
    graph.querySelectorAll("g.node").forEach(function (g) {
      g.classList.remove("st-done", "st-running", "st-failed", "st-skipped", "st-waiting");
      const st = nodes[g.id];
      if (st) g.classList.add("st-" + st);
      g.classList.toggle("reached", (edges[g.id] || 0) > 0);
      g.classList.toggle("selected", selected !== null && g.id === "node-" + selected);
      if (g.classList.contains("step")) {
        const b = badgeText(g);
        if (b) b.textContent = badges[g.id] || badgeRoom;
      }
    });
    graph.querySelectorAll("g.edge").forEach(function (g) {
      const n = edges[g.id] || 0;
      g.classList.toggle("taken", n > 0);
      // A labelled edge says how often it was taken on its last line.
      const texts = g.querySelectorAll("text");
      if (texts.length === 0) return;
      const last = texts[texts.length - 1];
      if (last.dataset.label === undefined) last.dataset.label = last.textContent;
      last.textContent = n > 0 ? last.dataset.label + " \u00d7" + n : last.dataset.label;
    });
    // Graphviz writes the graph's label as the graph's own text, inside
    // the link of its tooltip.
    const t = graph.querySelector("svg g.graph > text, svg g.graph > g > a > text");
    if (t && title) t.textContent = title;
  }

  function stepRows(steps) {
    const body = document.querySelector("#steps tbody");
    const frag = document.createDocumentFragment();
    (steps || []).forEach(function (s) {
      const tr = document.createElement("tr");
      tr.dataset.step = s.name;
      const a = text("a", s.name);
      a.href = "/run/" + encodeURIComponent(id) + "/step/" + encodeURIComponent(s.name);
      const td = document.createElement("td"); td.appendChild(a); tr.appendChild(td);
      const st = document.createElement("td"); st.appendChild(text("span", s.state, "state st-" + s.state)); tr.appendChild(st);
      tr.appendChild(text("td", s.attempts, "num"));
      tr.appendChild(text("td", s.duration));
      tr.appendChild(text("td", s.tokens || "", "num"));
      tr.appendChild(text("td", s.cost, "num"));
      tr.appendChild(text("td", s.error, "err"));
      if (s.name === selected) tr.classList.add("selected");
      frag.appendChild(tr);
    });
    body.replaceChildren(frag);
  }

  // rows finds the items' rows by for_each and key, from the page as the
  // server drew it, then as updates change it.
  let rows = null;
  function rowKey(step, key) { return step + "\u0000" + key; }
  function indexRows(body) {
    rows = new Map();
    body.querySelectorAll("tr").forEach(function (tr) { rows.set(rowKey(tr.dataset.step, tr.dataset.key), tr); });
  }

  function itemRow(it) {
    const tr = document.createElement("tr");
    tr.dataset.step = it.step;
    tr.dataset.key = it.key;
    tr.appendChild(text("td", it.step));
    tr.appendChild(text("td", it.key));
    const st = document.createElement("td"); st.appendChild(text("span", it.status, "state st-" + it.status)); tr.appendChild(st);
    const p = document.createElement("td");
    (it.path || []).forEach(function (s, i) {
      if (i > 0) p.appendChild(document.createTextNode(" → "));
      p.appendChild(text("span", s.step, "pstep st-" + s.state));
    });
    tr.appendChild(p);
    tr.appendChild(text("td", it.error, "err"));
    return tr;
  }

  // itemRows applies an update's items: the whole table when full, else
  // only the rows that changed, each at its place (i), so that an update
  // of a run of 1,000 items touches the few that moved on.
  function itemRows(items, full) {
    const body = document.querySelector("#items tbody");
    if (full) {
      const frag = document.createDocumentFragment();
      (items || []).forEach(function (it) { frag.appendChild(itemRow(it)); });
      body.replaceChildren(frag);
      indexRows(body);
    } else {
      if (!rows) indexRows(body);
      (items || []).forEach(function (it) {
        const tr = itemRow(it), k = rowKey(it.step, it.key), old = rows.get(k);
        if (old) old.replaceWith(tr);
        else body.insertBefore(tr, body.children[it.i] || null);
        rows.set(k, tr);
      });
    }
    document.getElementById("items-section").hidden = body.children.length === 0;
  }

  function question(w) {
    const q = document.getElementById("question");
    q.hidden = !w;
    if (!w) return;
    const key = w.item ? w.step + "[" + w.item + "]" : w.step;
    document.getElementById("q-key").value = key;
    document.getElementById("q-where").textContent = key;
    document.getElementById("q-text").textContent = w.question;
    const opts = document.getElementById("q-options");
    const frag = document.createDocumentFragment();
    if (w.text) {
      const inp = document.createElement("input");
      inp.name = "answer"; inp.required = true; inp.autocomplete = "off"; inp.placeholder = "your answer";
      frag.appendChild(inp); frag.appendChild(document.createTextNode(" "));
      frag.appendChild(text("button", "answer"));
    } else {
      (w.options || []).forEach(function (o) {
        const b = text("button", o); b.name = "answer"; b.value = o;
        frag.appendChild(b); frag.appendChild(document.createTextNode(" "));
      });
    }
    opts.replaceChildren(frag);
  }

  function update(v) {
    const t0 = performance.now();
    const status = document.getElementById("status");
    status.textContent = v.status;
    status.className = "status s-" + v.status;
    document.getElementById("reason").textContent = v.reason || "";
    document.getElementById("duration").textContent = v.duration;
    document.getElementById("tokens").textContent = v.tokens ? v.tokens + " tokens" : "";
    document.getElementById("cost").textContent = v.cost;
    if (v.svg && !graph.querySelector("svg")) {
      // A page drawn without its graph (the server could not draw it
      // then) takes the one an update brings.
      graph.innerHTML = v.svg;
    }
    paint(v.nodes || {}, v.edges, v.title, v.badges);
    stepRows(v.steps);
    itemRows(v.items, v.items_full);
    question(v.waiting);
    document.body.dataset.status = v.status;
    document.body.dataset.updates = String(Number(document.body.dataset.updates || 0) + 1);
    // How long the last update took to apply, for the benchmarks.
    document.body.dataset.updateMs = (performance.now() - t0).toFixed(1);
  }

  function show(step, item) {
    selected = step;
    let url = "/run/" + encodeURIComponent(id) + "/step/" + encodeURIComponent(step) + "?fragment=1";
    if (item) url += "&item=" + encodeURIComponent(item);
    fetch(url, { credentials: "same-origin" }).then(function (r) { return r.text(); }).then(function (html) {
      // The fragment is the server's template output, escaped there.
      detail.innerHTML = html;
    });
    graph.querySelectorAll("g.node").forEach(function (g) { g.classList.toggle("selected", g.id === "node-" + step); });
    document.querySelectorAll("#steps tr").forEach(function (tr) { tr.classList.toggle("selected", tr.dataset.step === step); });
  }

  graph.addEventListener("click", function (e) {
    const g = e.target.closest("g.node.step");
    if (!g) return;
    e.preventDefault();
    show(g.id.replace(/^node-/, ""));
  });
  document.getElementById("steps").addEventListener("click", function (e) {
    const tr = e.target.closest("tr[data-step]");
    if (!tr) return;
    e.preventDefault();
    show(tr.dataset.step);
  });
  detail.addEventListener("click", function (e) {
    const a = e.target.closest("a[data-item]");
    if (!a || !selected) return;
    e.preventDefault();
    show(selected, a.dataset.item);
  });

  try {
    const p = JSON.parse(document.getElementById("paint").textContent);
    paint(p.nodes || {}, p.edges, p.title, p.badges);
  } catch (e) { /* no states yet */ }
  if (window.EventSource) {
    // The stamp says which state the page was drawn from: the stream
    // then sends only what changed since.
    const es = new EventSource("/run/" + encodeURIComponent(id) + "/live?stamp=" + encodeURIComponent(run.dataset.stamp || ""));
    es.addEventListener("update", function (e) { update(JSON.parse(e.data)); });
    es.addEventListener("gone", function () { es.close(); });
  }
})();
