"""The package's functions that are not attention: schedules, threads and CUDA's status."""

import attngen


def test_list_schedules_describes_every_available_one():
    infos = {s["name"]: s for s in attngen.list_schedules()}
    for name in attngen.available_schedules():
        assert name in infos and infos[name]["summary"]


def test_set_num_threads_returns_the_previous_value():
    previous = attngen.set_num_threads(1)
    try:
        assert attngen.set_num_threads(3) == 1
    finally:
        attngen.set_num_threads(previous)


def test_cuda_status_says_why_not():
    status = attngen.cuda_status()
    assert isinstance(status.available, bool)
    # Without a usable device the runtime names the reason; with one there is none to give.
    assert status.available == (status.reason == "")
