"""The map of a fitted Pipeline's derived columns back to its input columns
(sapwood.adapters.read_pipeline): traced through the transformers' own records, checked
against what each derived column actually reads (changing one input column changes only
the derived columns mapped to it) and against get_feature_names_out."""

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.decomposition import PCA
from sklearn.feature_selection import VarianceThreshold
from sklearn.impute import SimpleImputer
from sklearn.pipeline import FeatureUnion, Pipeline, make_pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    OneHotEncoder,
    OrdinalEncoder,
    PolynomialFeatures,
    StandardScaler,
    TargetEncoder,
)
from sklearn.tree import DecisionTreeRegressor

from sapwood.adapters import CodesToLabels, from_model, read_pipeline


def _table(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.choice(list("xyz"), n),
                      "c": rng.normal(size=n), "d": rng.normal(size=n),
                      "e": rng.choice(list("pq"), n), "f": rng.normal(size=n)})
    X.loc[::7, "c"] = np.nan
    y = X["a"] + (X["b"] == "x") + rng.integers(0, 3, n)
    return X, y


def _mixed():
    """Every kind of step at once: one-hot (a dropped first level), an imputer with
    indicators inside a nested pipeline, a multiclass target encoder, polynomial terms
    joining two columns, a column dropped."""
    return ColumnTransformer([
        ("onehot", OneHotEncoder(drop="first"), ["b", "e"]),
        ("numbers", make_pipeline(SimpleImputer(add_indicator=True), StandardScaler()),
         ["a", "c"]),
        ("target", TargetEncoder(), ["b"]),
        ("poly", PolynomialFeatures(2), ["d", "a"]),
    ], remainder="drop")


def _reads_empirically(pipeline, X):
    """For each derived column, the input columns whose change changes it."""
    model = read_pipeline(pipeline)
    base = model.transform(X)
    reads = [set() for _ in range(base.shape[1])]
    for j, name in enumerate(X.columns):
        changed = X.copy()
        changed[name] = changed[name].sample(frac=1, random_state=1).to_numpy()
        after = model.transform(changed)
        for k in np.flatnonzero(~np.all((after == base) | (np.isnan(after) & np.isnan(base)),
                                        axis=0)):
            reads[k].add(j)
    return reads


def test_every_derived_column_is_traced_to_the_input_columns_it_reads():
    X, y = _table()
    pipeline = make_pipeline(_mixed(), DecisionTreeRegressor(random_state=0)).fit(X, y)
    model = read_pipeline(pipeline)
    assert model.row_wise
    traced = [set(read) for read in model.columns.reads]
    empirical = _reads_empirically(pipeline, X)
    # What a change of an input column changes, the map names (the map may name more:
    # the bias column of PolynomialFeatures reads nothing, a one-hot column of a rare
    # level may not change under one shuffle).
    assert all(seen <= named for seen, named in zip(empirical, traced, strict=True))
    assert model.columns.derived_names == tuple(pipeline[0].get_feature_names_out())
    names, inputs, derived = model.columns.groups(X.columns)
    # a and d share the polynomial terms; f is dropped, so read by no derived column.
    assert names == ["a & d", "b", "c", "e", "f"]
    assert [list(i) for i in inputs] == [[0, 3], [1], [2], [4], [5]]
    assert derived[-1].size == 0
    b_columns = [model.columns.derived_names[k] for k in derived[1]]
    assert b_columns == ["onehot__b_y", "onehot__b_z", "target__b"]


def test_a_multiclass_target_encoder_makes_one_column_per_class_and_input():
    X, y = _table()
    labels = np.asarray(["low", "mid", "high"])[np.digitize(X["a"], [-0.5, 0.5])]
    encoder = ColumnTransformer([("target", TargetEncoder(), ["b", "e"])])
    # Encoded against the classes, a tree on one of them: the map reads the encoder.
    pipeline = make_pipeline(encoder, DecisionTreeRegressor())
    pipeline[0].fit(X, labels)
    pipeline[1].fit(pipeline[0].transform(X), labels == "high")
    model = read_pipeline(pipeline)
    assert [sorted(read) for read in model.columns.reads] == [[1]] * 3 + [[4]] * 3
    assert set(map(frozenset, _reads_empirically(pipeline, X))) <= {frozenset({1}),
                                                                     frozenset({4})}


def test_from_model_gives_the_last_steps_trees_in_the_derived_columns():
    X, y = _table()
    pipeline = make_pipeline(_mixed(), DecisionTreeRegressor(random_state=0)).fit(X, y)
    ensemble = from_model(pipeline)
    assert ensemble.feature_names == tuple(pipeline[0].get_feature_names_out())
    derived = read_pipeline(pipeline).transform(X)
    np.testing.assert_array_equal(ensemble.predict(derived), pipeline.predict(X))


def test_feature_groups_take_whole_units():
    X, y = _table()
    pipeline = make_pipeline(_mixed(), DecisionTreeRegressor(random_state=0)).fit(X, y)
    columns = read_pipeline(pipeline).columns
    names, inputs, derived = columns.groups(X.columns, {"ad": ["a", "d"], "be": ["b", "e"]})
    assert names == ["ad", "be"]
    assert [list(i) for i in inputs] == [[0, 3], [1, 4]]
    with pytest.raises(ValueError, match="takes 'a' without 'd'"):
        columns.groups(X.columns, {"a": ["a"]})
    with pytest.raises(ValueError, match="names column 'zz'"):
        columns.groups(X.columns, {"z": ["zz"]})


def test_steps_not_known_to_be_row_wise_are_named_and_read_as_one_unit():
    X, y = _table()
    numbers = X[["a", "d", "f"]]
    pipeline = make_pipeline(StandardScaler(), PCA(2), DecisionTreeRegressor()).fit(numbers, y)
    model = read_pipeline(pipeline)
    assert model.not_row_wise == ("pca (PCA)",)
    assert model.columns.groups(numbers.columns)[0] == ["a & d & f"]
    # A FunctionTransformer's function: declared one-to-one, the map follows; its
    # rows are still not known to be mapped one by one.
    declared = make_pipeline(FunctionTransformer(np.abs, feature_names_out="one-to-one"),
                             DecisionTreeRegressor()).fit(numbers, y)
    model = read_pipeline(declared)
    assert model.columns.groups(numbers.columns)[0] == ["a", "d", "f"]
    assert not model.row_wise


def test_selectors_unions_passthrough_and_samplers():
    X, y = _table()
    numbers = X[["a", "c", "d"]].fillna(0).assign(constant=1.0)
    union = FeatureUnion([("same", "passthrough"), ("squares", PolynomialFeatures(2))])
    pipeline = Pipeline([("select", VarianceThreshold()), ("skip", None),
                         ("union", union), ("tree", DecisionTreeRegressor())]).fit(numbers, y)
    model = read_pipeline(pipeline)
    assert model.row_wise
    assert model.columns.groups(numbers.columns)[0] == ["a & c & d", "constant"]

    imblearn = pytest.importorskip("imblearn")
    from imblearn.over_sampling import RandomOverSampler
    from sklearn.tree import DecisionTreeClassifier

    labels = (X["a"] > 1).astype(int)
    sampled = imblearn.pipeline.make_pipeline(
        OrdinalEncoder(), RandomOverSampler(random_state=0),
        DecisionTreeClassifier(random_state=0)).fit(X[["b", "e"]], labels)
    model = read_pipeline(sampled)
    assert [name for name, _ in model.steps] == ["ordinalencoder"]
    np.testing.assert_array_equal(model.final.predict(model.transform(X[["b", "e"]])),
                                  sampled.predict(X[["b", "e"]]))


def test_codes_to_labels_gives_the_table_back():
    X, _ = _table(10)
    codes = X.assign(b=X["b"].map({"x": 0.0, "y": 1.0, "z": 2.0}))
    codes.loc[0, "b"] = np.nan
    decoded = CodesToLabels({"b": ["x", "y", "z"]}).fit(codes).transform(codes)
    expected = X["b"].astype(object).copy()
    expected.iloc[0] = np.nan
    pd.testing.assert_series_equal(decoded["b"], expected, check_dtype=False)
    pd.testing.assert_frame_equal(decoded.drop(columns="b"), X.drop(columns="b"))


def test_an_unfitted_pipeline_is_refused_with_a_reason():
    with pytest.raises(TypeError, match="unfitted pipeline"):
        read_pipeline(make_pipeline(StandardScaler(), DecisionTreeRegressor()))
