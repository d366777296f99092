"""Catalog settings of the Spark data source from Spark conf and options (no Spark needed)."""

from __future__ import annotations

import pytest

from icefloe.errors import InvalidArgumentError
from icefloe.spark.options import ReadOptions, catalogs_from_conf, with_conf_catalogs


def test_conf_catalogs_are_grouped_by_name():
    catalogs, default = catalogs_from_conf(
        {
            "spark.icefloe.catalog.lake.type": "rest",
            "spark.icefloe.catalog.lake.uri": "http://127.0.0.1:8181",
            "spark.icefloe.catalog.lake.header.X-Iceberg-Access-Delegation": "vended-credentials",
            "spark.icefloe.catalog.local.uri": "sqlite:////tmp/c.db",
            "spark.icefloe.default-catalog": "lake",
            "spark.sql.catalog.lake.type": "rest",
        }
    )
    assert default == "lake"
    assert dict(catalogs)["lake"] == (
        ("header.X-Iceberg-Access-Delegation", "vended-credentials"),
        ("type", "rest"),
        ("uri", "http://127.0.0.1:8181"),
    )
    assert dict(catalogs)["local"] == (("uri", "sqlite:////tmp/c.db"),)


@pytest.mark.parametrize(
    "key", ["spark.icefloe.catalog.lake", "spark.icefloe.catalog..uri", "spark.icefloe.catalog.lake."]
)
def test_conf_key_without_name_or_property_is_refused(key):
    with pytest.raises(InvalidArgumentError, match="<catalog name>.<property>"):
        catalogs_from_conf({key: "x"})


def test_options_win_over_the_conf_and_pick_the_catalog():
    catalogs, default = catalogs_from_conf(
        {
            "spark.icefloe.catalog.lake.type": "rest",
            "spark.icefloe.catalog.lake.uri": "http://conf",
            "spark.icefloe.catalog.lake.s3.endpoint": "http://conf-s3",
            "spark.icefloe.catalog.other.uri": "http://other",
            "spark.icefloe.default-catalog": "lake",
        }
    )
    # no catalog option: the default catalog's properties
    o = ReadOptions.of(with_conf_catalogs({"path": "db.t"}, catalogs, default))
    assert o.catalog.name == "lake"
    assert dict(o.catalog.properties) == {
        "type": "rest",
        "uri": "http://conf",
        "s3.endpoint": "http://conf-s3",
    }
    # given as an option (either spelling), a property is the option's
    o = ReadOptions.of(
        with_conf_catalogs(
            {"path": "db.t", "URI": "http://opt", "catalog.s3.endpoint": "http://opt-s3"}, catalogs, default
        )
    )
    assert dict(o.catalog.properties) == {"type": "rest", "uri": "http://opt", "s3.endpoint": "http://opt-s3"}
    # another catalog by option: only its own conf properties
    o = ReadOptions.of(with_conf_catalogs({"path": "db.t", "catalog": "other"}, catalogs, default))
    assert (o.catalog.name, dict(o.catalog.properties)) == ("other", {"uri": "http://other"})
    # nothing in the conf: the options as they were
    o = ReadOptions.of(with_conf_catalogs({"path": "db.t"}, (), None))
    assert (o.catalog.name, o.catalog.properties) == ("default", ())
