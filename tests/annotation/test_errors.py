"""annotation/errors.py: what an error's message says."""

from annotation.errors import ItemsInvalid


def test_a_problem_of_an_imported_files_line_names_the_file_line_and_field():
    assert ItemsInvalid([(3, "text", "empty")], file="items.csv").message == "items.csv:3: field 'text': empty"


def test_a_problem_of_a_line_without_a_file_names_the_line_and_field():
    assert ItemsInvalid([(3, "text", "empty")]).message == "line 3: text: empty"


def test_a_problem_of_a_setting_names_its_field_and_no_line_0():
    assert ItemsInvalid([(0, "screen_out_code", "must differ")]).message == "screen_out_code: must differ"
