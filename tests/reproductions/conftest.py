"""Fixtures of the reproduction tests."""

import urllib.error

import pytest


@pytest.fixture
def offline(tmp_path, monkeypatch):
    """No dataset anywhere and no network: empty $PAPERZOO_DATA and local copy; every download raises URLError.

    Returns the (empty) $PAPERZOO_DATA folder, where the one-line error tells the user to put the files.
    """
    from keras_paperzoo.data import sources

    data = tmp_path / "paperzoo_data"
    monkeypatch.setenv(sources.DATA_ENV, str(data))
    monkeypatch.setenv(sources.LOCAL_ENV, str(tmp_path / "no_local_copy"))

    def no_network(url, path, sha256=None):
        raise urllib.error.URLError("no network in the tests")

    monkeypatch.setattr(sources, "fetch_url", no_network)
    return data
