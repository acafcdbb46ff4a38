"""Every key and value name of the official `mlperf_logging.mllog.constants` (4.1.68).

Same names and values, so code written against the official module runs unchanged on proctor;
the 6.1 disclosure keys (lowest numerical precision, parallelism, micro batch size, config file)
and the YAML-only keys the official module lacks are added at the end. A benchmark's name is its
record's (`rules/training/benchmarks.py`); the names of benchmarks proctor has no record of
(gnmt, minigo, ncf, transformer) are the official module's.
"""

from __future__ import annotations

from proctor.rules.training import benchmarks as _benchmarks

DEFAULT_LOGGER_NAME = "mllog_default"
DEFAULT_NAMESPACE = ""
INTERVAL_END = "INTERVAL_END"
INTERVAL_START = "INTERVAL_START"
POINT_IN_TIME = "POINT_IN_TIME"
CLOSED = "closed"
OPEN = "open"
ONPREM = "onprem"
CLOUD = "cloud"
RESEARCH = "research"
DLRM_DCNv2 = _benchmarks.DLRM_DCNV2.name
GNMT = "gnmt"
MASKRCNN = _benchmarks.MASKRCNN.name
MINIGO = "minigo"
NCF = "ncf"
RESNET = _benchmarks.RESNET.name
SSD = _benchmarks.SSD.name
RETINANET = _benchmarks.RETINANET.name
STABLE_DIFFUSION = _benchmarks.STABLE_DIFFUSION.name
TRANSFORMER = "transformer"
RNNT = _benchmarks.RNNT.name
UNET3D = _benchmarks.UNET3D.name
BERT = _benchmarks.BERT.name
GPT3 = _benchmarks.GPT3.name
LLAMA2_70B_LORA = _benchmarks.LLAMA2_70B_LORA.name
GNN = _benchmarks.GNN.name
RGAT = _benchmarks.RGAT.name
LLAMA31_405B = _benchmarks.LLAMA31_405B.name
LLAMA31_8B = _benchmarks.LLAMA31_8B.name
FLUX1 = _benchmarks.FLUX1.name
DEEPSEEKV3_671B = _benchmarks.DEEPSEEKV3_671B.name
QWEN35_397B_GRPO = _benchmarks.QWEN35_397B_GRPO.name
DLRMV4 = _benchmarks.DLRMV4.name
ADAGRAD = "adagrad"
ADAM = "adam"
ADAMW = "adamw"
LARS = "lars"
LAZY_ADAM = "lazy_adam"
SGD = "sgd"
LAMB = "lamb"
ABORTED = "aborted"
SUCCESS = "success"
SUBMISSION_BENCHMARK = "submission_benchmark"
SUBMISSION_DIVISION = "submission_division"
SUBMISSION_ENTRY = "submission_entry"
SUBMISSION_ORG = "submission_org"
SUBMISSION_PLATFORM = "submission_platform"
SUBMISSION_POC_NAME = "submission_poc_name"
SUBMISSION_POC_EMAIL = "submission_poc_email"
SUBMISSION_STATUS = "submission_status"
BLOCK_START = "block_start"
BLOCK_STOP = "block_stop"
EPOCH_START = "epoch_start"
EPOCH_STOP = "epoch_stop"
EVAL_START = "eval_start"
EVAL_STOP = "eval_stop"
INIT_START = "init_start"
INIT_STOP = "init_stop"
STAGING_START = "staging_start"
STAGING_STOP = "staging_stop"
RUN_START = "run_start"
RUN_STOP = "run_stop"
CACHE_CLEAR = "cache_clear"
EVAL_ACCURACY = "eval_accuracy"
EVAL_SAMPLES = "eval_samples"
SEED = "seed"
TRAIN_SAMPLES = "train_samples"
TRAINED_SAMPLES = "trained_samples"
WEIGHTS_INITIALIZATION = "weights_initialization"
GLOBAL_BATCH_SIZE = "global_batch_size"
GRADIENT_ACCUMULATION_STEPS = "gradient_accumulation_steps"
LARS_EPSILON = "lars_epsilon"
LARS_OPT_BASE_LEARNING_RATE = "lars_opt_base_learning_rate"
LARS_OPT_END_LR = "lars_opt_end_learning_rate"
LARS_OPT_LEARNING_RATE_WARMUP_EPOCHS = "lars_opt_learning_rate_warmup_epochs"
LARS_OPT_LR_DECAY_POLY_POWER = "lars_opt_learning_rate_decay_poly_power"
LARS_OPT_LR_DECAY_STEPS = "lars_opt_learning_rate_decay_steps"
LARS_OPT_MOMENTUM = "lars_opt_momentum"
LARS_OPT_WEIGHT_DECAY = "lars_opt_weight_decay"
MAX_IMAGE_SIZE = "max_image_size"
MAX_SAMPLES = "max_samples"
MAX_STEPS = "max_steps"
MAX_SEQUENCE_LENGTH = "max_sequence_length"
MIN_IMAGE_SIZE = "min_image_size"
MODEL_BN_SPAN = "model_bn_span"
NUM_IMAGE_CANDIDATES = "num_image_candidates"
NUM_WARMUP_STEPS = "num_warmup_steps"
OPT_ADAGRAD_EPSILON = "opt_adagrad_epsilon"
OPT_ADAGRAD_INITIAL_ACCUMULATOR_VALUE = "opt_adagrad_initial_accumulator_value"
OPT_ADAGRAD_LR_DECAY = "opt_adagrad_learning_rate_decay"
OPT_ADAMW_BETA_1 = "opt_adamw_beta_1"
OPT_ADAMW_BETA_2 = "opt_adamw_beta_2"
OPT_ADAMW_EPSILON = "opt_adamw_epsilon"
OPT_ADAMW_WEIGHT_DECAY = "opt_adamw_weight_decay"
OPT_ADAM_BETA_1 = "opt_adam_beta_1"
OPT_ADAM_BETA_2 = "opt_adam_beta_2"
OPT_ADAM_EPSILON = "opt_adam_epsilon"
OPT_NAME = "opt_name"
OPT_BASE_LR = "opt_base_learning_rate"
OPT_END_LR = "opt_end_learning_rate"
OPT_LAMB_LR_MIN = "opt_lamb_learning_rate_min"
OPT_LAMB_LR_DECAY_POLY_POWER = "opt_lamb_learning_rate_decay_poly_power"
OPT_LAMB_WEIGHT_DECAY = "opt_lamb_weight_decay_rate"
OPT_LAMB_BETA_1 = "opt_lamb_beta_1"
OPT_LAMB_BETA_2 = "opt_lamb_beta_2"
OPT_LAMB_EPSILON = "opt_lamb_epsilon"
OPT_LAMB_LR_HOLD_EPOCHS = "opt_lamb_learning_rate_hold_epochs"
OPT_LR_ALT_DECAY_FUNC = "opt_learning_rate_alt_decay_func"
OPT_LR_ALT_WARMUP_FUNC = "opt_learning_rate_alt_warmup_func"
OPT_LR_DECAY_BOUNDARY_EPOCHS = "opt_learning_rate_decay_boundary_epochs"
OPT_LR_DECAY_BOUNDARY_STEPS = "opt_learning_rate_decay_boundary_steps"
OPT_LR_DECAY_FACTOR = "opt_learning_rate_decay_factor"
OPT_LR_DECAY_INTERVAL = "opt_learning_rate_decay_interval"
OPT_LR_DECAY_START_STEP = "opt_learning_rate_decay_start_step"
OPT_LR_DECAY_STEPS = "opt_learning_rate_decay_steps"
OPT_LR_DECAY_SCHEDULE = "opt_learning_rate_decay_schedule"
OPT_LR_REMAIN_STEPS = "opt_learning_rate_remain_steps"
OPT_LR_TRAINING_STEPS = "opt_learning_rate_training_steps"
OPT_LR_WARMUP_EPOCHS = "opt_learning_rate_warmup_epochs"
OPT_LR_WARMUP_FACTOR = "opt_learning_rate_warmup_factor"
OPT_LR_WARMUP_STEPS = "opt_learning_rate_warmup_steps"
OPT_WEIGHT_DECAY = "opt_weight_decay"
OPT_GRADIENT_CLIP_NORM = "opt_gradient_clip_norm"
DATA_SPEED_PERTURBATON_MAX = "data_speed_perturbaton_max"
DATA_SPEED_PERTURBATON_MIN = "data_speed_perturbaton_min"
DATA_SPEC_AUGMENT_FREQ_N = "data_spec_augment_freq_n"
DATA_SPEC_AUGMENT_FREQ_MIN = "data_spec_augment_freq_min"
DATA_SPEC_AUGMENT_FREQ_MAX = "data_spec_augment_freq_max"
DATA_SPEC_AUGMENT_TIME_N = "data_spec_augment_time_n"
DATA_SPEC_AUGMENT_TIME_MIN = "data_spec_augment_time_min"
DATA_SPEC_AUGMENT_TIME_MAX = "data_spec_augment_time_max"
DATA_TRAIN_NUM_BUCKETS = "data_train_num_buckets"
DATA_TRAIN_MAX_DURATION = "data_train_max_duration"
DATA_NUM_BUCKETS = "data_num_buckets"
MODEL_EVAL_EMA_FACTOR = "model_eval_ema_factor"
MODEL_WEIGHTS_INITIALIZATION_SCALE = "model_weights_initialization_scale"
EVAL_MAX_PREDICTION_SYMBOLS = "eval_max_prediction_symbols"
START_WARMUP_STEP = "start_warmup_step"
INIT_CHECKPOINT_STEP = "init_checkpoint_step"
LORA_ALPHA = "lora_alpha"
MOE_AUX_LOSS_COEFF = "moe_aux_loss_coeff"
GENERATION_TRAINING_ROLLOUT_TEMPERATURE = "generation_training_rollout_temperature"
GENERATION_TRAINING_ROLLOUT_TOP_P = "generation_training_rollout_top_p"
GENERATION_VALIDATION_ROLLOUT_TEMPERATURE = "generation_validation_rollout_temperature"
GENERATION_VALIDATION_ROLLOUT_TOP_P = "generation_validation_rollout_top_p"
NUM_GENERATIONS_PER_PROMPT = "num_generations_per_prompt"
NUM_PROMPTS_PER_STEP = "num_prompts_per_step"
OPT_SPARSE_NAME = "opt_sparse_name"
OPT_SPARSE_BASE_LR = "opt_sparse_base_learning_rate"
OPT_LR_WARMUP_START_LR = "opt_learning_rate_warmup_start_lr"
EVAL_EVERY_DATA_PCT = "eval_every_data_pct"
BBOX = "bbox"
SEGM = "segm"
EPOCH_COUNT = "epoch_count"
EPOCH_NUM = "epoch_num"
FIRST_EPOCH_NUM = "first_epoch_num"
STATUS = "status"
STEP_NUM = "step_num"
SAMPLES_COUNT = "samples_count"
POWER_MEASUREMENT_START = "power_measurement_start"
POWER_MEASUREMENT_STOP = "power_measurement_stop"
POWER_READING = "power_reading"
CONVERTION_EFF = "conversion_eff"
INTERCONNECT_POWER_EST = "interconnect_power_est"
LOWEST_NUMERICAL_PRECISION_IN_ATTN = "lowest_numerical_precision_in_attn"
LOWEST_NUMERICAL_PRECISION_IN_COMM = "lowest_numerical_precision_in_comm"
LOWEST_NUMERICAL_PRECISION_IN_LINEAR = "lowest_numerical_precision_in_linear"
TENSOR_PARALLELISM = "tensor_parallelism"
PIPELINE_PARALLELISM = "pipeline_parallelism"
CONTEXT_PARALLELISM = "context_parallelism"
EXPERT_PARALLELISM = "expert_parallelism"
MICRO_BATCH_SIZE = "micro_batch_size"
CONFIG_FILENAME = "config_filename"

# Keys the official rules use that the official constants module lacks (YAML-only), and the
# 6.1 disclosure keys (rules §5 Basics, "From v6.1 onwards ... must appear exactly once").
LORA_RANK = "lora_rank"
EVALUATION_FREQUENCY = "evaluation_frequency"
AVERAGED_VALIDATION_LOSS = "averaged_validation_loss"
GPT_OSS_20B = _benchmarks.GPT_OSS_20B.name

DISCLOSURE_KEYS = (
    LOWEST_NUMERICAL_PRECISION_IN_LINEAR,
    LOWEST_NUMERICAL_PRECISION_IN_ATTN,
    LOWEST_NUMERICAL_PRECISION_IN_COMM,
    TENSOR_PARALLELISM,
    PIPELINE_PARALLELISM,
    CONTEXT_PARALLELISM,
    EXPERT_PARALLELISM,
    MICRO_BATCH_SIZE,
    CONFIG_FILENAME,
)
