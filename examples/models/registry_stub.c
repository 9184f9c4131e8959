/* placeholder until the bundled models land */
typedef int tc_models_placeholder_;
