"""The machinery the importance measures share; no measure lives here.

A map, by what a measure needs:

- results: :mod:`._result` (``ImportanceResult``, the one result type, with its
  intervals and rank intervals) and :mod:`._ranks` (rank intervals, per-row and per-tree
  draws in blocks);
- scoring permuted rows: :mod:`._permutation_engine` picks the evaluator for a model,
  :mod:`._tree_evaluator` re-evaluates only the trees that split on a shuffled
  feature, :mod:`._chunked_evaluator` does it in bounded memory over blocks of rows,
  :mod:`._permuted_model` dresses the evaluator's outputs as a fitted model for
  scikit-learn's scorers, :mod:`._permutation_rows` turns the changed rows into per-row
  draws, :mod:`._scoring` names scorers;
- rows that do not fit in memory: :mod:`._dask` and :mod:`._permutation_dask`;
- TreeSHAP's tables and outputs: :mod:`._shap_trees`, :mod:`._shap_output`,
  :mod:`._shap_interventional`;
- Gaussian knockoffs (CPI, the knockoff filter): :mod:`._knockoff_sampler`;
- what several measures read of a model or table: :mod:`._names` (feature names),
  :mod:`._bagging` (a forest's bootstrap draws and out-of-bag rows), :mod:`._groups`
  (groups of columns permuted together), :mod:`._survival` (what a measure of a class
  or a number says to a survival model);
- a result as HTML: :mod:`._html`.

Modules here import each other and the layers below (the format, adapters, learners,
kernels), never a measure's module.
"""
