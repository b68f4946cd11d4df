"""The functions the site's widgets call, one module per page (site_src/pages/).

tokens      tokens.md          tokenize_demo, next_token_demo
attention   attention.md       attention_demo, model_attention
wall        quadratic-wall.md  race, reprocessing, quadratic_wall, race_figure, quadratic_wall_figure
kv_cache    kv-cache.md        step_through, step_through_figure, cache_equivalence, cache_phases
generate    generate.md        generation_demo, race_demo, race_theory
memory      memory.md          kv_memory_figure, gpu_fit_figure
engine_log  memory.md          engine_log_figure (a start-up log, rebuilt from the config)
engines     memory.md          engines_figure (vLLM, SGLang, TensorRT-LLM, llama.cpp side by side)
kv_quant    memory.md          kv_quant_demo, kv_quant_table (the cache stored quantized)
serving     serving.md         serving_figure, serving_sim_figure (the scheduler simulation, played)
prefix      prefix-cache.md    prefix_cache_demo, prefix_cache_figure, prefix_blocks
eviction    eviction.md        eviction_timeline, eviction_view, context_shift_timeline,
                               context_shift_view, eviction_recall_demo

Every one is exported from `kvlab` (the browser calls them by name through
kvlab.bridge.call_json). Inputs are checked by kvlab.inputs; text is formatted
by kvlab.wording; what each returns is a TypedDict in its page's <page>_types module
(tokens_types, memory_types ...; shapes several pages share in shared_types), imported
under `if TYPE_CHECKING:` only, so the browser's first widget builds no class it never uses.
"""
