"""Constants shared by the sandbox attack suite (a uniquely named module: several test
folders have a conftest.py, so `from conftest import …` would be ambiguous)."""

SECRET_ENV = "BOA_TEST_SECRET"
SECRET_VALUE = "s3cr3t-env-value-8d1f"
EXPECTED_MARKER = 987654321012  # an expected output no honest program computes by chance
