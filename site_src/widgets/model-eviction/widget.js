/* Eviction on the real model (EP05): the reader edits a door-code chat (or keeps
 * chatting with the model), shrinks the window, then asks for the code. The tiny
 * model reads the chat token by token (kvlab.generate with streamPrompt) under
 * three caches; kvlab.door_code_chat finds the code's tokens and kvlab.door_code_score
 * turns the model's raw outputs (answers, cached positions, per-token loss) into
 * every number shown. Static figure: kvlab.model_eviction_figure (numpy). */
kvlab.register("model-eviction", {
  mount(root, ctx) {
    const kit = kvlab.kit;
    const form = root.querySelector("form");
    const plot = root.querySelector(".kv-me-plot");
    const plotHelp = root.querySelector(".kv-me-plot-help"); // shown with the chart, which only a run draws
    const about = root.querySelector(".kv-me-about"); // where the chat states its code: the chat's view
    const episodes = ctx.data.episodes;
    const COLORS = { full: "#3f51b5", window: "#e53935", sinks: "#ffb300" };
    const runButton = form.querySelector("[data-action=run]");
    const sayButton = form.querySelector("[data-action=say]");
    let busy = false;

    function sync() {
      form["window-out"].value = form.window.value;
      form["sinks-out"].value = form.sinks.value;
    }
    form.addEventListener("input", sync);
    form.episode.addEventListener("change", () => {
      form.chat.value = episodes[Number(form.episode.value)].chat;
      ctx.notice("");
    });

    function setBusy(on) {
      busy = on;
      runButton.disabled = on;
      sayButton.disabled = on;
    }

    /* Keep chatting: the reader's line, then the model's reply (full cache, greedy, one line). */
    async function say() {
      const line = form.say.value.trim();
      if (busy || !line) return;
      setBusy(true);
      ctx.setState("loading");
      try {
        await ctx.model();
        const chat = form.chat.value.replace(/\n*$/, "\n");
        const prompt = `${chat}user: ${line}\nbot:`;
        ctx.say("The model is answering…");
        const r = await kvlab.generate({ prompt, maxNewTokens: 24, useCache: true, temperature: 0 });
        const reply = r.text.split("\n")[0];
        form.chat.value = `${chat}user: ${line}\nbot:${reply}\n`;
        form.chat.scrollTop = form.chat.scrollHeight;
        form.say.value = "";
        ctx.say("The model answered (it knows only its tiny world). Shrink the window, then ask for the code.");
        ctx.setState("ready");
      } catch (err) {
        ctx.fail(err);
      } finally {
        setBusy(false);
      }
    }
    sayButton.addEventListener("click", say);
    form.say.addEventListener("keydown", (e) => {
      if (e.key === "Enter") {
        e.preventDefault();
        say();
      }
    });

    async function run() {
      if (busy) return;
      setBusy(true);
      ctx.setState("loading");
      const window = Number(form.window.value);
      const sinks = Number(form.sinks.value);
      try {
        const model = await ctx.model();
        const facts = await ctx.call("door_code_chat", { chat: form.chat.value, block_size: model.config.block_size });
        ctx.notice(facts.view.note);
        if (!facts.code) {
          ctx.say("Nothing to ask: the chat states no door code.");
          ctx.setState("ready");
          return;
        }
        kit.bind(about, { view: facts.view });
        const policies = { full: null, window: { sinks: 0, window }, sinks: { sinks, window } };
        const NAMES = { full: "full cache", window: "sliding window", sinks: "sinks + window" };
        const runs = {};
        for (const [name, evict] of Object.entries(policies)) {
          ctx.say(`Reading the chat with the ${NAMES[name]}…`);
          const r = await kvlab.generate({
            prompt: facts.prompt, maxNewTokens: 8, useCache: true, temperature: 0, streamPrompt: true,
            evict: evict || undefined,
            onPromptToken: (t) => t.position % 64 === 0 && ctx.say(`Reading the chat with the ${NAMES[name]}: token ${t.position + 1} of ${facts.n_tokens}…`),
          });
          const last = r.steps[r.steps.length - 1];
          runs[name] = { answer: r.text, cached: evict ? last.cachedPositions : null, prompt_nll: r.promptNll, kept: last.cacheLenAfter };
        }
        const score = await ctx.call("door_code_score", { code: facts.code, code_positions: facts.code_positions, runs, window, sinks });
        await render(score, runs, facts);
        ctx.say("Read and answered in your browser by the tiny model (onnxruntime-web), scored by kvlab.door_code_score.");
        ctx.setState("ready");
      } catch (err) {
        ctx.fail(err);
      } finally {
        setBusy(false);
      }
    }

    async function render(score, runs, facts) {
      kit.bind(root, { score, view: facts.view }); // the table's rows, the lines and the hovers: score.view, from Python
      root.dataset.results = JSON.stringify({ score, runs });
      const traces = Object.entries(score.chart).map(([name, c]) => ({
        type: "scatter", mode: "lines", name: score.policies[name].label, line: { color: COLORS[name], width: 2 },
        x: c.x, y: c.extra, hovertext: score.view.hover[name], hovertemplate: "%{hovertext}<extra></extra>",
      }));
      const lines = Object.entries(score.code_gone_at).filter(([, x]) => x !== null).map(([name, x]) => ({
        type: "line", xref: "x", yref: "paper", x0: x, x1: x, y0: 0, y1: 1, line: { color: COLORS[name], width: 1.5, dash: "dot" },
      }));
      const cp = score.code_positions;
      await kit.plot(root, plot, traces, {
        height: 330,
        margin: { l: 60, r: 10, t: 24, b: 80 },
        legend: { orientation: "h", y: -0.3 },
        xaxis: { title: { text: "token position in the chat" } },
        yaxis: { title: { text: `extra loss (mean of ${score.loss_smooth})` }, zeroline: true, zerolinecolor: "rgba(128,128,128,0.6)" },
        shapes: cp.length ? [{ type: "rect", xref: "x", yref: "paper", x0: cp[0] + 1, x1: cp[cp.length - 1] + 1, y0: 0, y1: 1, fillcolor: "rgba(255,179,0,0.3)", line: { width: 0 } }, ...lines] : lines,
        annotations: cp.length ? [{ x: cp[0] + 1, y: 1, yref: "paper", text: "the code", showarrow: false, yanchor: "bottom", font: { size: 11 } }] : [],
      });
      plotHelp.hidden = false;
    }

    runButton.addEventListener("click", run);
    return { activate: () => ctx.model().then(() => { ctx.say("Model loaded: edit the chat or keep chatting, shrink the window, then ask for the door code."); ctx.setState("ready"); }) };
  },
});
