import Foundation

/// Shell completion for `waitingroom`, written from the commands' declarations:
/// `waitingroom --generate-completion-script bash|zsh|fish`.
///
/// Completes subcommands, each subcommand's options, option values (paths, or the listed
/// words such as `basic section`) and positionals.
struct CompletionScript {
    var root: CommandDescription
    var subcommands: [any CLICommand.Type]

    /// One subcommand's completion facts.
    struct Entry {
        var name: String
        var abstract: String
        var options: [(name: String, help: String, takesValue: Bool, completion: CLICompletion)]
        var positional: CLICompletion?
    }

    var entries: [Entry] { subcommands.map { Self.entry($0) } }

    static func entry<C: CLICommand>(_: C.Type) -> Entry {
        let visible = C.arguments.filter { !$0.isHidden }
        return Entry(
            name: C.about.name, abstract: C.about.abstract,
            options: visible.filter { $0.kind != .positional }.map {
                (name: $0.name, help: $0.help, takesValue: $0.kind == .option, completion: $0.completion)
            },
            positional: visible.first { $0.kind == .positional }.map(\.completion))
    }

    /// `compgen` for a completion of the current word, or nil for none.
    static func compgen(_ completion: CLICompletion) -> String? {
        switch completion {
        case .none: return nil
        case .files: return "COMPREPLY=($(compgen -f -- \"$cur\"))"
        case .choices(let words): return "COMPREPLY=($(compgen -W '\(words.joined(separator: " "))' -- \"$cur\"))"
        }
    }

    /// The bash function and its `complete` line (without the first line).
    var bashBody: String {
        let function = "_" + root.name.replacingOccurrences(of: "-", with: "_")
        let entries = self.entries
        let names = entries.map(\.name)
        var text = """
            \(function)() {
                local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} options=
                if [[ $COMP_CWORD -eq 1 ]]; then
                    COMPREPLY=($(compgen -W '\((names + ["help", "-h", "--help", "--generate-completion-script"]).joined(separator: " "))' -- "$cur"))
                    return
                fi
                case ${COMP_WORDS[1]} in

            """
        for entry in entries {
            text += "        \(entry.name))\n"
            let valued = entry.options.filter(\.takesValue)
            if !valued.isEmpty {
                text += "            case $prev in\n"
                for option in valued {
                    text += "                --\(option.name)) \(Self.compgen(option.completion) ?? ":"); return ;;\n"
                }
                text += "            esac\n"
            }
            let words = entry.options.map { "--" + $0.name } + ["-h", "--help"]
            text += "            options='\(words.joined(separator: " "))'\n"
            if let positional = entry.positional, let compgen = Self.compgen(positional) {
                text += "            [[ $cur == -* ]] || { \(compgen); return; }\n"
            }
            text += "            ;;\n"
        }
        text += """
                    help) [[ $COMP_CWORD -eq 2 ]] && COMPREPLY=($(compgen -W '\(names.joined(separator: " "))' -- "$cur")); return ;;
                    --generate-completion-script) [[ $COMP_CWORD -eq 2 ]] && COMPREPLY=($(compgen -W 'bash zsh fish' -- "$cur")); return ;;
                esac
                COMPREPLY=($(compgen -W "$options" -- "$cur"))
            }
            complete -F \(function) \(root.name)

            """
        return text
    }

    /// For bash: `source <(waitingroom --generate-completion-script bash)`.
    var bash: String { "#!/bin/bash\n# bash completion for \(root.name)\n" + bashBody }

    /// For zsh: the bash function through zsh's `bashcompinit`.
    var zsh: String {
        "#compdef \(root.name)\n# zsh completion for \(root.name) (the bash completion through bashcompinit)\n"
            + "autoload -U +X bashcompinit && bashcompinit\n" + bashBody
    }

    /// For fish: `waitingroom --generate-completion-script fish > ~/.config/fish/completions/waitingroom.fish`.
    var fish: String {
        func quoted(_ text: String) -> String {
            "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
        }
        let command = root.name
        var text = "# fish completion for \(command)\ncomplete -c \(command) -f\n"
        for entry in entries {
            text += "complete -c \(command) -n __fish_use_subcommand -a \(entry.name) -d \(quoted(entry.abstract))\n"
        }
        text += "complete -c \(command) -n __fish_use_subcommand -a help -d 'Show subcommand help information.'\n"
        for entry in entries {
            let condition = "-n '__fish_seen_subcommand_from \(entry.name)'"
            for option in entry.options {
                var line = "complete -c \(command) \(condition) -l \(option.name)"
                if option.takesValue {
                    switch option.completion {
                    case .files: line += " -r -F"
                    case .choices(let words): line += " -x -a \(quoted(words.joined(separator: " ")))"
                    case .none: line += " -x"
                    }
                }
                text += line + " -d \(quoted(option.help))\n"
            }
            switch entry.positional {
            case .files?: text += "complete -c \(command) \(condition) -F\n"
            case .choices(let words)?: text += "complete -c \(command) \(condition) -a \(quoted(words.joined(separator: " ")))\n"
            default: break
            }
        }
        return text
    }
}
