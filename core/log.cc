#include "log.h"

#include <spdlog/sinks/stdout_sinks.h>

#include <memory>
#include <optional>

#include "env.h"

namespace infinirt::core {

namespace {

std::shared_ptr<spdlog::logger> MakeLogger() {
  // Not registered in spdlog's global registry: an application using spdlog itself keeps its
  // own default logger and its own "infinirt"-named loggers untouched.
  auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  auto logger = std::make_shared<spdlog::logger>("infinirt", std::move(sink));
  logger->set_pattern("[infinirt] [%l] %v");
  logger->set_level(spdlog::level::warn);
  logger->flush_on(spdlog::level::trace);
  return logger;
}

// A level name in any case (DEBUG, Debug, debug), or nullopt when it names no level. spdlog also
// takes "warning", "err" and "critical".
std::optional<spdlog::level::level_enum> ParseLogLevel(const std::string& name) {
  const std::string lower = ToLower(name);
  const auto level = spdlog::level::from_str(lower);
  // from_str answers "off" for names it does not know.
  if (level == spdlog::level::off && lower != "off") return std::nullopt;
  return level;
}

}  // namespace

spdlog::logger& Log() {
  // Never destroyed: calls made from static destructors and atexit handlers that run after
  // this function's statics would be destroyed still log safely.
  static std::shared_ptr<spdlog::logger>& logger = *new std::shared_ptr<spdlog::logger>([] {
    auto created = MakeLogger();
    if (auto name = GetEnvWithoutWarning(EnvVar::INFINIRT_LOG_LEVEL)) {
      if (auto level = ParseLogLevel(*name)) created->set_level(*level);
    }
    return created;
  }());
  return *logger;
}

bool SetLogLevel(const std::string& level_name) {
  const auto level = ParseLogLevel(level_name);
  if (!level) return false;
  Log().set_level(*level);
  return true;
}

void ResetLogLevel() {
  Log().set_level(spdlog::level::warn);
  if (auto level = GetEnv(EnvVar::INFINIRT_LOG_LEVEL)) {
    if (!SetLogLevel(*level)) {
      Log().warn("INFINIRT_LOG_LEVEL='{}' is not one of off/error/warn/info/debug/trace", *level);
    }
  }
}

void PluginLog(infinirtLogLevel_t level, const char* plugin, const char* message) {
  static constexpr spdlog::level::level_enum kLevels[] = {spdlog::level::trace,
                                                          spdlog::level::debug, spdlog::level::info,
                                                          spdlog::level::warn, spdlog::level::err};
  const int index = static_cast<int>(level);
  const auto spd_level = (index >= 0 && index <= 4) ? kLevels[index] : spdlog::level::err;
  Log().log(spd_level, "[{}] {}", plugin ? plugin : "?", message ? message : "");
}

}  // namespace infinirt::core
