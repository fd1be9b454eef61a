//===- tools/common/Cli.cpp - Command lines on CLI11 ----------------------===//

#include "Cli.h"

#include "hbg/support/Diagnostics.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

namespace hbg::tools {

double parseNumber(const std::string &flag, const std::string &text) {
  char *end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0')
    throw UsageError{"`" + flag + "` needs a number, got `" + text + "`"};
  return v;
}

double parseWhole(const std::string &flag, const std::string &text, double lo, double hi,
                  const std::string &must) {
  double n = parseNumber(flag, text);
  if (!(n >= lo && n == std::floor(n) && n <= hi))
    throw UsageError{"`" + flag + "` must be " + must};
  return n;
}

void parseParameter(const std::string &kv, std::map<std::string, double> &params) {
  auto eq = kv.find('=');
  if (eq == std::string::npos || eq == 0)
    throw UsageError{"`-p` needs NAME=VALUE, got `" + kv + "`"};
  params[kv.substr(0, eq)] = parseNumber("-p " + kv.substr(0, eq), kv.substr(eq + 1));
}

bool readInput(const std::string &path, std::string &text, std::string &why) {
  if (path != "-")
    return readFile(path, text, why);
  text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  if (std::cin.bad()) {
    why = "cannot read standard input";
    return false;
  }
  return true;
}

namespace {

constexpr std::size_t kWidth = 79;  // of a line of help
constexpr std::size_t kColumn = 23; // where descriptions start

/// `text` wrapped to kWidth, every line but the first indented by
/// `indent`; a blank line in `text` starts a paragraph, and a line that
/// begins with spaces is kept as written (examples, lists).
std::string wrap(const std::string &text, std::size_t indent, std::size_t first) {
  std::string out, line;
  std::size_t col = first;
  std::istringstream lines(text);
  std::string raw;
  bool start = true;
  auto newline = [&] {
    out += "\n" + std::string(indent, ' ');
    col = indent;
  };
  while (std::getline(lines, raw)) {
    if (raw.empty() || raw[0] == ' ') {
      if (!start)
        newline();
      out += raw;
      col += raw.size();
      start = false;
      if (raw.empty())
        col = kWidth; // the next word starts a line
      continue;
    }
    std::istringstream words(raw);
    std::string w;
    while (words >> w) {
      if (!start && col + 1 + w.size() > kWidth)
        newline();
      else if (!start)
        out += ' ', ++col;
      out += w;
      col += w.size();
      start = false;
    }
  }
  return out;
}

std::string optionName(const CLI::Option *o) {
  if (o->get_positional())
    return o->get_name(true);
  std::string s;
  for (const std::string &n : o->get_snames())
    s += (s.empty() ? "-" : ", -") + n;
  for (const std::string &n : o->get_lnames())
    s += (s.empty() ? "--" : ", --") + n;
  if (o->get_type_size_max() > 0 && !o->get_type_name().empty())
    s += " " + o->get_type_name();
  return s;
}

/// The entry of one argument, option or command: its name, then its
/// description from kColumn (on the next line when the name is long).
std::string entry(const std::string &name, const std::string &description) {
  std::string s = "  " + name;
  if (s.size() + 1 > kColumn)
    s += "\n" + std::string(kColumn, ' ');
  else
    s += std::string(kColumn - s.size(), ' ');
  return s + wrap(description, kColumn, kColumn) + "\n";
}

/// The full name of a (sub)command, as typed: `hbgc run`.
std::string commandPath(const CLI::App *app) {
  std::string path = app->get_name();
  for (const CLI::App *p = app->get_parent(); p; p = p->get_parent())
    path = p->get_name() + " " + path;
  return path;
}

class HelpFormatter : public CLI::Formatter {
public:
  std::string make_help(const CLI::App *app, std::string, CLI::AppFormatMode) const override {
    std::string out = "usage: " + commandPath(app);
    std::vector<const CLI::Option *> positionals =
        app->get_options([](const CLI::Option *o) { return o->get_positional(); });
    std::vector<const CLI::Option *> options =
        app->get_options([](const CLI::Option *o) { return !o->get_positional(); });
    std::vector<const CLI::App *> commands = app->get_subcommands({});
    if (!commands.empty())
      out += " <command>";
    for (const CLI::Option *o : positionals)
      out += " " + o->get_name(true);
    if (!options.empty())
      out += " [options]";
    out += "\n\n";
    std::string text = app->get_footer().empty() ? app->get_description() : app->get_footer();
    if (!text.empty())
      out += wrap(text, 0, 0) + "\n\n";
    if (!commands.empty()) {
      out += "commands:\n";
      for (const CLI::App *c : commands)
        out += entry(c->get_name(), c->get_description());
      out += "\n`" + commandPath(app) + " <command> --help` describes a command.\n\n";
    }
    if (!positionals.empty()) {
      out += "arguments:\n";
      for (const CLI::Option *o : positionals)
        out += entry(optionName(o), o->get_description());
      out += "\n";
    }
    if (!options.empty()) {
      out += "options:\n";
      for (const CLI::Option *o : options)
        out += entry(optionName(o), o->get_description());
    }
    while (out.size() > 1 && out[out.size() - 1] == '\n' && out[out.size() - 2] == '\n')
      out.pop_back();
    return out;
  }
};

/// Every option name `app` accepts, spelled as typed.
std::vector<std::string> optionNames(const CLI::App *app) {
  std::vector<std::string> names;
  for (const CLI::Option *o : app->get_options()) {
    for (const std::string &n : o->get_snames())
      names.push_back("-" + n);
    for (const std::string &n : o->get_lnames())
      names.push_back("--" + n);
  }
  return names;
}

void allowExtras(CLI::App &app) {
  app.allow_extras();
  for (CLI::App *sub : app.get_subcommands([](CLI::App *) { return true; }))
    allowExtras(*sub);
}

/// The deepest command given on the command line.
const CLI::App *chosen(const CLI::App &app) {
  for (const CLI::App *sub : app.get_subcommands())
    return chosen(*sub);
  return &app;
}

/// The usage error for `arg`, which `app` does not accept.
UsageError unexpected(const CLI::App &app, const std::string &arg) {
  std::string suggestion;
  std::string what;
  if (arg.size() > 1 && arg[0] == '-') {
    std::string name = arg.substr(0, arg.find('='));
    what = "unknown option `" + name + "`";
    suggestion = closestName(name, optionNames(&app));
    if (!suggestion.empty())
      what += " of `" + commandPath(&app) + "`; did you mean `" + suggestion + "`?";
  } else if (!app.get_subcommands({}).empty() && app.get_parent() == nullptr) {
    std::vector<std::string> names;
    for (const CLI::App *c : app.get_subcommands({}))
      names.push_back(c->get_name());
    what = "unknown command `" + arg + "`";
    suggestion = closestName(arg, names);
    if (!suggestion.empty())
      what += "; did you mean `" + suggestion + "`?";
  } else {
    what = "unexpected argument `" + arg + "`";
  }
  return UsageError{what};
}

} // namespace

void configure(CLI::App &app) {
  app.formatter(std::make_shared<HelpFormatter>());
  app.set_help_flag("-h,--help", "print this help and exit");
}

CLI::Option *addRepeated(CLI::App &app, const std::string &names,
                         std::function<void(const std::string &)> each, const std::string &help,
                         const std::string &valueName) {
  return app
      .add_option_function<std::vector<std::string>>(
          names,
          [each](const std::vector<std::string> &values) {
            for (const std::string &v : values)
              each(v);
          },
          help)
      ->type_name(valueName)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

CLI::Option *addValue(CLI::App &app, const std::string &names,
                      std::function<void(const std::string &)> set, const std::string &help,
                      const std::string &valueName) {
  std::string shown = names.substr(names.rfind(',') + 1);
  if (shown[0] != '-')
    shown = (shown.size() > 1 ? "--" : "-") + shown;
  return app
      .add_option_function<std::vector<std::string>>(
          names,
          [set, shown](const std::vector<std::string> &values) {
            if (values.size() > 1)
              throw UsageError{"`" + shown + "` given twice"};
            set(values.front());
          },
          help)
      ->type_name(valueName)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

std::optional<int> parse(CLI::App &app, int argc, const char *const *argv) {
  allowExtras(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp &) {
    // The help of the deepest command given: `hbgc run -h`.
    std::cout << app.help() << std::flush;
    return std::cout ? 0 : 1;
  } catch (const CLI::CallForVersion &e) {
    std::cout << e.what() << "\n" << std::flush;
    return std::cout ? 0 : 1;
  } catch (const CLI::ArgumentMismatch &e) {
    // An option with no value is the last argument, spelled as typed there.
    std::string what = e.what();
    std::string name = what.substr(0, what.find(':'));
    if (argc > 1 && argv[argc - 1][0] == '-') {
      name = argv[argc - 1];
      name = name.substr(0, name.find('='));
    }
    throw UsageError{"`" + name + "` needs a value"};
  } catch (const CLI::ParseError &e) {
    throw UsageError{e.what()};
  }
  const CLI::App *command = chosen(app);
  // What the command left over: unknown options, or a command name that
  // is none (from the top).
  for (const CLI::App *a = command; a; a = a->get_parent())
    for (const std::string &arg : a->remaining())
      if (arg != "--")
        throw unexpected(*a, arg);
  return std::nullopt;
}

} // namespace hbg::tools
