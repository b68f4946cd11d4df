"""The functions the site's widgets call, one module per page (site_src/pages/).

tokens      tokens.md          tokens_figure, next_token_figure
attention   attention.md       attention_figure, model_attention_figure
wall        quadratic-wall.md  race, reprocessing_figure, quadratic_wall, race_figure, quadratic_wall_figure
kv_cache    kv-cache.md        step_through, step_through_figure, cache_equivalence, cache_phases
generate    generate.md        generate_figure, model_race_figure, race_theory
memory      memory.md          kv_memory_figure, gpu_fit_figure
engine_log  memory.md          engine_log_figure (a start-up log, rebuilt from the config)
engines     memory.md          engines_figure (vLLM, SGLang, TensorRT-LLM, llama.cpp side by side)
kv_quant    memory.md          kv_quant_figure, kv_quant_table (the cache stored quantized)
serving     serving.md         serving_figure, serving_sim_figure (the scheduler simulation, played)
prefix      prefix-cache.md    prefix_cache_demo, prefix_cache_figure, prefix_blocks_figure
eviction    eviction.md        eviction_timeline, eviction_figure, context_shift_timeline,
                               context_shift_figure, model_eviction_figure

Every one is exported from `kvlab` (the browser calls them by name through
kvlab.bridge.call_json). Inputs are checked by kvlab.inputs; text is formatted
by kvlab.wording; what each returns is a TypedDict in its page's <page>_types module
(tokens_types, memory_types ...; shapes several pages share in shared_types), imported
under `if TYPE_CHECKING:` only, so the browser's first widget builds no class it never uses.
"""
